// Where keys and IVs come from on the command line. Keys are read from a file
// (raw bytes or hex text) or, with a warning, from --key-hex; they live only in
// SecretBytes, and no message ever contains key material.
#pragma once

#include <string>

#include "paes/mode.hpp"

namespace paes::cli {

// Exactly one of key_hex and key_file must be non-empty (usage Error otherwise).
// Throws Error when the file can't be read or holds no valid key, and a usage
// Error for a malformed --key-hex.
SecretBytes load_key(const std::string& key_hex, const std::string& key_file);

// Decodes a key file's content: hex text (32, 48 or 64 hex digits, surrounding
// whitespace ignored) or else raw bytes (16, 24 or 32 of them).
SecretBytes decode_key_file(const SecretBytes& content, const std::string& path);

// The IV for `mode` from --iv: required (32 hex digits) unless the mode is ECB,
// which refuses one. Throws a usage Error.
Block parse_iv(Mode mode, const std::string& iv_hex);

}  // namespace paes::cli
