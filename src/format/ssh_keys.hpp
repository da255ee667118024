// ssh keys as age 1.1.1 takes them (its agessh package and cmd/age/parse.go):
// public keys from authorized_keys-style lines ("TYPE BASE64 [comment]", as
// ssh-keygen writes NAME.pub), and private keys from the files ssh-keygen
// writes (OpenSSH's "-----BEGIN OPENSSH PRIVATE KEY-----" container, and PEM),
// passphrase-protected or not. Only the ssh-ed25519 and ssh-rsa types wrap a
// file key (format/ssh_stanza.hpp); another well-formed type is named, so a
// caller can skip it with a warning, as age does.
//
// libssh reads every key format (ssh_key_type_from_name and the ssh_pki_*
// imports, here only). Where libssh 0.10 hands nothing back, the OpenSSH
// container is read here, and only after libssh has accepted it: the
// Ed25519 private key out of the unencrypted container libssh exports (it
// has no other export of it), an RSA private key's numbers out of an
// unencrypted container (libssh 0.10 can't export an RSA key that it read
// from one: it keeps no CRT exponents, which PEM needs), and the public key
// in the clear header of an encrypted container (libssh 0.10 has no call
// for it), which libssh then validates.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cipher/ssh_crypto.hpp"
#include "paes/secret.hpp"

namespace paes {

// age's bounds: a line as long as sshd(8) reads, a private key file of 16 KiB.
inline constexpr std::size_t kMaxSshKeyLineLen = 8 * 1024;
inline constexpr std::size_t kMaxSshKeyFileLen = 16 * 1024;
// The RSA moduli age takes: 2048 bits (age refuses keys under 256 bytes) up
// to 16384 bits, past which a key is a way to make a peer compute for long.
inline constexpr std::size_t kMinSshRsaBits = 2048;
inline constexpr std::size_t kMaxSshRsaBits = 16384;

enum class SshKeyType { ed25519, rsa };

struct SshPublicKey {
  SshKeyType type = SshKeyType::ed25519;
  std::vector<std::uint8_t> wire;  // the ssh wire encoding (RFC 4253 section 6.6), as libssh writes it
};

// "ssh-ed25519" or "ssh-rsa": the key type's ssh name, which is its stanza's type too.
std::string ssh_key_type_name(SshKeyType type);

// "TYPE BASE64", the key as an authorized_keys line without a comment.
std::string ssh_public_key_line(const SshPublicKey& key);

// age's short name of a key in its stanzas: base64(SHA-256(wire)[:4]),
// unpadded, as every base64 of age's header.
std::string ssh_key_tag(const SshPublicKey& key);

// An authorized_keys-style line, "TYPE BASE64 [comment]", without the
// options field (as age reads recipients): `key` for ssh-ed25519 and ssh-rsa;
// for another well-formed type (ecdsa-sha2-*, sk-*, ssh-dss: its blob starts
// with the type named) no key and `unsupported_type` its name. Throws a usage
// Error ("<where> ...") for a malformed line, a line longer than
// kMaxSshKeyLineLen, an Ed25519 point X25519 can't use, or an RSA key outside
// kMinSshRsaBits..kMaxSshRsaBits bits or with an exponent age refuses.
struct SshPublicKeyLine {
  std::optional<SshPublicKey> key;
  std::string unsupported_type;
};
SshPublicKeyLine parse_ssh_public_key_line(std::string_view line, const std::string& where);

// Whether `line` starts as an ssh public key does, a type name and base64 of
// a wire blob: to word an error about a line that is no age recipient.
bool looks_like_ssh_public_key(std::string_view line);

// A private key, and its public key. `secret`: for ssh-ed25519 the 64-byte
// key as libsodium and OpenSSH keep it (seed, public key); for ssh-rsa the
// key as PKCS#8 DER.
struct SshPrivateKey {
  SshPublicKey public_key;
  SecretBytes secret;
};

// What an ssh private key file gives without a passphrase: its public key
// always, its private key unless it is passphrase-protected (nullopt).
struct SshIdentityFile {
  SshPublicKey public_key;
  std::optional<SshPrivateKey> key;
};

// Whether a file's first bytes are a PEM-style private key block, as age
// tells an ssh identity from its own ("-----BEGIN ... PRIVATE KEY-----").
bool looks_like_ssh_private_key(std::span<const std::uint8_t> text);

// Reads an ssh private key file named `name`. `public_key_file` is the text
// of NAME.pub when the caller found one: only a passphrase-protected PEM key
// needs it, having no public key of its own. Throws a usage Error for a file
// larger than kMaxSshKeyFileLen, a key of another type than ssh-ed25519 or
// ssh-rsa (naming it), a protected PEM key without NAME.pub, and a protected
// ssh-rsa key in OpenSSH's container (libssh 0.10 decrypts it but can't hand
// it over: the message says how to convert it to PEM); an Error for a file
// libssh can't read.
SshIdentityFile read_ssh_identity(const SecretBytes& text, const std::string& name,
                                  std::optional<std::string> public_key_file);

// Decrypts the passphrase-protected key file `text` (which read_ssh_identity
// found to be one, with the public key `expected`). Throws Error "<name>:
// wrong passphrase ..." when libssh can't decrypt it with `passphrase`, and
// an Error when the private key is not `expected`'s.
SshPrivateKey decrypt_ssh_identity(const SecretBytes& text, const SecretBytes& passphrase,
                                   const SshPublicKey& expected, const std::string& name);

// The numbers a stanza needs, read from a key's wire encoding. Throw Error for
// a key of the other type.
std::array<std::uint8_t, kEd25519PublicKeyLen> ssh_ed25519_public_key(const SshPublicKey& key);
RsaPublicNumbers ssh_rsa_public_numbers(const SshPublicKey& key);  // views into key.wire

}  // namespace paes
