// Key derivation, all through OpenSSL: HMAC-SHA256, HKDF-SHA256 on it (Tink's
// segment key), scrypt (passphrases of the sealed format), PBKDF2-HMAC-SHA256
// (openssl enc -pbkdf2), and plain SHA-256 (digests that name things, never
// keys). Every function throws Error when OpenSSL fails. random_bytes
// (paes/secret.hpp) is defined in kdf.cpp too.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "paes/secret.hpp"

namespace paes {

// HMAC-SHA256(key, data). Throws Error when OpenSSL fails.
std::array<std::uint8_t, 32> hmac_sha256(std::span<const std::uint8_t> key, std::span<const std::uint8_t> data);

// RFC 5869 HKDF with SHA-256 (an empty salt is HashLen zero bytes), written
// on the HMAC above rather than OpenSSL's HKDF, whose info OpenSSL 3.0 caps at
// 32,768 bytes: Tink's info is the whole associated data, which has no such
// limit. Throws Error when out_len exceeds RFC 5869's 255 * 32 bytes.
SecretBytes hkdf_sha256(const SecretBytes& ikm, std::span<const std::uint8_t> salt,
                        std::span<const std::uint8_t> info, std::size_t out_len);

struct ScryptParams {
  std::uint8_t log2_n = 18;  // N = 2^18: about a second here, like age
  std::uint8_t r = 8;
  std::uint8_t p = 1;
};

// The most memory scrypt_key lets scrypt use: a hostile file must not make
// paes allocate without bound. age's own limit, a work factor of 2^22 at
// r = 8, takes 4 GiB and 1 KiB, so that age's files and stanzas all open.
inline constexpr std::uint64_t kMaxScryptMemory = (std::uint64_t{4} << 30) + (std::uint64_t{1} << 20);

// The memory scrypt needs with `params` (log2_n at most 30), as scrypt_key
// counts it against kMaxScryptMemory.
constexpr std::uint64_t scrypt_memory(const ScryptParams& params) {
  return 128 * std::uint64_t{params.r} * ((std::uint64_t{1} << params.log2_n) + std::uint64_t{params.p});
}

// scrypt needs 128 * r * N bytes; refuses parameters that need more than
// kMaxScryptMemory.
SecretBytes scrypt_key(const SecretBytes& passphrase, std::span<const std::uint8_t> salt,
                       const ScryptParams& params, std::size_t out_len);

std::array<std::uint8_t, 32> sha256(std::string_view data);

// PBKDF2-HMAC with the OpenSSL digest named `digest` (sha256, sha512, ...).
// Throws a usage Error for a digest OpenSSL doesn't know.
SecretBytes pbkdf2_hmac(const SecretBytes& passphrase, std::span<const std::uint8_t> salt, std::uint32_t iterations,
                        const std::string& digest, std::size_t out_len);

SecretBytes pbkdf2_sha256(const SecretBytes& passphrase, std::span<const std::uint8_t> salt,
                          std::uint32_t iterations, std::size_t out_len);

}  // namespace paes
