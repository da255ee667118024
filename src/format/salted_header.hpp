// openssl enc's passphrase format for raw modes (-pbkdf2):
//
//   "Salted__" | salt (8 bytes) | ciphertext
//
// with key || IV = PBKDF2-HMAC-SHA256(passphrase, salt, iterations), the IV
// left out for ECB. paes writes and reads it so that either tool decrypts
// the other's output.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "paes/mode.hpp"

namespace paes {

inline constexpr std::size_t kSaltedSaltLen = 8;
inline constexpr std::size_t kSaltedHeaderLen = 8 + kSaltedSaltLen;
using SaltedSalt = std::array<std::uint8_t, kSaltedSaltLen>;

std::array<std::uint8_t, kSaltedHeaderLen> encode_salted_header(const SaltedSalt& salt);

// The salt of `bytes`, an input's first bytes (fewer than kSaltedHeaderLen
// when the input is shorter). Throws Error "<name>: not openssl enc -pbkdf2
// data (no "Salted__" header)" when they are short or lack the magic.
SaltedSalt decode_salted_header(std::span<const std::uint8_t> bytes, const std::string& name);

// The raw job after the header: base's mode, direction and padding, with the
// key (pbkdf2.key_len bytes) and IV derived from the passphrase and salt.
// Throws a usage Error for a key length other than 16, 24 or 32.
// `salt` is the header's, or empty for openssl enc -nosalt.
CipherSpec salted_cipher_spec(const CipherSpec& base, const Pbkdf2Key& pbkdf2, std::span<const std::uint8_t> salt);

}  // namespace paes
