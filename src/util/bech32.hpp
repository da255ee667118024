// Bech32 (BIP 173) as age writes its keys: the BIP's checksum and character
// set, without its 90-character limit (an age identity is 74 characters, a
// recipient 62, but age's own decoder takes any length), and not bech32m.
// The data part may be a secret key, so decoding fills wiped memory.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "paes/secret.hpp"

namespace paes {

struct Bech32Text {
  std::string hrp;   // the human-readable part, lowercase
  SecretBytes data;  // the 8-bit data the 5-bit groups carry
};

// Decodes `text`, or nothing when it is not valid Bech32: a character outside
// 33..126, mixed case, no '1' separator, an empty human-readable part, a data
// part shorter than the 6-character checksum, a character outside the
// data alphabet, a wrong checksum, or 5-bit groups that don't end on a byte
// (more than 4 padding bits, or padding bits that are not zero).
std::optional<Bech32Text> bech32_decode(std::string_view text);

// The Bech32 text of `data` under `hrp` (lowercase ASCII), written into
// wiped memory, in upper case when `upper` (age's identities).
SecretBytes bech32_encode(std::string_view hrp, std::span<const std::uint8_t> data, bool upper);

}  // namespace paes
