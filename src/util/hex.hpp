#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "paes/secret.hpp"

namespace paes {

// Decodes hex digits (either case, no separators) or returns nothing when the
// text is not an even number of hex digits.
std::optional<SecretBytes> decode_hex(std::string_view text);
std::string encode_hex(std::span<const std::uint8_t> bytes);
// Writes the lowercase hex digits of `bytes` to `out`, which must be exactly
// twice as long: for secrets, into memory the caller wipes (SecretBytes).
void encode_hex_into(std::span<const std::uint8_t> bytes, std::span<std::uint8_t> out);

}  // namespace paes
