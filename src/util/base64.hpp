// Base64 as age's header writes it (RFC 4648 section 4, the standard
// alphabet, without padding), decoded strictly: only canonical text is
// accepted, so every byte string has exactly one encoding and a header can't
// be altered without changing its bytes (the header MAC covers the text).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "paes/secret.hpp"

namespace paes {

std::string encode_base64(std::span<const std::uint8_t> bytes);

// The bytes of `text`, or nothing when it is not canonical unpadded base64:
// a character outside the alphabet ('=' included), a length that leaves 1
// character over, or unused low bits in the last character that are not zero.
std::optional<std::vector<std::uint8_t>> decode_base64(std::string_view text);

// RFC 4648 base64 with its '=' padding, as PEM bodies and ssh's key lines
// write it, decoded as strictly (canonical text only), into wiped memory: the
// text may be a private key's.
std::optional<SecretBytes> decode_padded_base64(std::string_view text);

}  // namespace paes
