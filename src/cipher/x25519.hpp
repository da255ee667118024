// X25519 (RFC 7748) and ChaCha20-Poly1305 (RFC 8439) through OpenSSL 3: the
// primitives of age's X25519 recipient stanza (format/x25519_stanza.hpp).
// Private keys and shared secrets live in SecretBytes; OpenSSL's copies sit in
// its secure heap and are cleared when freed. Every function throws Error
// when OpenSSL fails.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "paes/secret.hpp"
#include "paes/x25519_key.hpp"

struct evp_pkey_st;  // OpenSSL's EVP_PKEY, for X25519PrivateKey

namespace paes {

inline constexpr std::size_t kX25519KeyLen = 32;
inline constexpr std::size_t kPoly1305TagLen = 16;
// The nonce of age's stanzas: each wrap key is new and seals one message.
inline constexpr std::array<std::uint8_t, 12> kStanzaWrapNonce{};

// The public key of a 32-byte private key (X25519 with the base point).
X25519PublicKey x25519_public_of(const SecretBytes& private_key);

// X25519(private_key, peer). Throws Error when the result is all zero: `peer`
// is a low-order point, and the secret would be one anybody can predict.
SecretBytes x25519_shared_secret(const SecretBytes& private_key, const X25519PublicKey& peer);

// A private key imported into OpenSSL once, for its public key and every
// agreement it makes. OpenSSL multiplies out a private key's public key when
// it imports it: the two calls above, one after the other, import twice (an
// ephemeral key's wrap needs both, an identity its public key for each
// stanza's wrap key and a secret with each stanza's share).
class X25519PrivateKey {
 public:
  explicit X25519PrivateKey(const SecretBytes& key);
  ~X25519PrivateKey();
  X25519PrivateKey(X25519PrivateKey&&) noexcept;
  X25519PrivateKey& operator=(X25519PrivateKey&&) noexcept;

  const X25519PublicKey& public_key() const { return public_; }
  // X25519(this key, peer); throws as x25519_shared_secret does.
  SecretBytes shared_secret(const X25519PublicKey& peer) const;

 private:
  evp_pkey_st* key_ = nullptr;  // OpenSSL's EVP_PKEY, freed (and cleared) with this object
  X25519PublicKey public_{};
};

// Whether `point`, a canonical u-coordinate (below 2^255 - 19), is one of
// the points of small order, with which every X25519 result is zero: 0, 1,
// 2^255 - 20 and the two points of order 8 (RFC 7748 section 7; libsodium's
// list). A comparison, where asking X25519 for a secret to check costs a
// key generation and a multiplication per recipient; the wrap's all-zero
// check (x25519_shared_secret) still stands behind it.
bool is_low_order_point(const X25519PublicKey& point);

// ChaCha20-Poly1305 with a 32-byte key, a 12-byte nonce and no associated
// data: ciphertext || tag.
std::vector<std::uint8_t> chacha20_poly1305_seal(const SecretBytes& key, std::span<const std::uint8_t, 12> nonce,
                                                 std::span<const std::uint8_t> plaintext);
// The plaintext, or nothing when the tag doesn't verify (another key).
std::optional<SecretBytes> chacha20_poly1305_open(const SecretBytes& key, std::span<const std::uint8_t, 12> nonce,
                                                  std::span<const std::uint8_t> sealed);

}  // namespace paes
