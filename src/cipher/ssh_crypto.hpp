// The primitives of age's two ssh recipient types (format/ssh_stanza.hpp)
// beside X25519 and ChaCha20-Poly1305 (cipher/x25519.hpp): the maps from an
// Ed25519 key pair to the X25519 key pair of the same secret (libsodium's:
// OpenSSL has none), and RSA-OAEP with SHA-256 (OpenSSL's EVP). Private keys
// live in SecretBytes; OpenSSL's and libsodium's types stay in the .cpp.
// Every function throws Error when its library fails.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "paes/secret.hpp"
#include "paes/x25519_key.hpp"

namespace paes {

inline constexpr std::size_t kEd25519PublicKeyLen = 32;
// libsodium's form of an Ed25519 private key, which OpenSSH's container holds
// too: the 32-byte seed, then the public key.
inline constexpr std::size_t kEd25519SecretKeyLen = 64;

// The X25519 public key of an Ed25519 public key (the Edwards point's
// Montgomery u-coordinate). Throws Error for a point libsodium refuses: not
// on the curve, of small order, or outside the prime-order subgroup (no key
// that ssh-keygen makes is any of these).
X25519PublicKey ed25519_public_to_x25519(std::span<const std::uint8_t, kEd25519PublicKeyLen> public_key);

// The X25519 private key of an Ed25519 private key (kEd25519SecretKeyLen
// bytes): SHA-512(seed)[:32], clamped, which is what X25519 makes of age's
// unclamped scalar too.
SecretBytes ed25519_secret_to_x25519(const SecretBytes& secret_key);

// An RSA public key's numbers as ssh's wire encoding has them: big-endian,
// a leading zero byte allowed.
struct RsaPublicNumbers {
  std::span<const std::uint8_t> modulus;
  std::span<const std::uint8_t> exponent;
};

// An RSA private key's numbers as OpenSSH's key container holds them (no CRT
// exponents: they are computed here). Each views bytes the caller keeps,
// in SecretBytes for the secret ones.
struct RsaPrivateNumbers {
  std::span<const std::uint8_t> modulus, public_exponent, private_exponent, iqmp, p, q;
};

// RSA-OAEP (RFC 8017) with SHA-256 and MGF1-SHA-256, and `label`.
std::vector<std::uint8_t> rsa_oaep_sha256_encrypt(const RsaPublicNumbers& key, std::string_view label,
                                                  std::span<const std::uint8_t> plaintext);

// The plaintext, or nothing when `ciphertext` doesn't decrypt under
// `private_key_der` (PKCS#8 DER, as the two functions below make it).
std::optional<SecretBytes> rsa_oaep_sha256_decrypt(const SecretBytes& private_key_der, std::string_view label,
                                                   std::span<const std::uint8_t> ciphertext);

// An RSA private key as PKCS#8 DER, from its numbers or from unencrypted PEM
// (PKCS#1 or PKCS#8). Throws Error when the key is not a consistent RSA key.
SecretBytes rsa_private_key_from_numbers(const RsaPrivateNumbers& numbers);
SecretBytes rsa_private_key_from_pem(const SecretBytes& pem);

// Puts the ciphers a passphrase-protected PEM key names in its DEK-Info
// (ssh-keygen -m PEM's AES-128-CBC, openssl's AES and triple DES) in
// OpenSSL's table of legacy cipher names, where PEM's decryption looks them
// up (EVP_get_cipherbyname, through libssh): a process may start OpenSSL
// without that table (paes' CLI does: util/openssl_set_up.hpp). Idempotent.
void name_pem_key_ciphers();

}  // namespace paes
