// Small views of text that the key and header parsers share.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace paes {

inline std::string_view as_text(std::span<const std::uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

inline std::span<const std::uint8_t> as_bytes(std::string_view text) {
  return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

// ASCII white space, as C's isspace has it in the C locale (never a
// locale's idea of it: keys are ASCII).
constexpr bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// `text` without the white space at either end.
inline std::string_view trimmed(std::string_view text) {
  while (!text.empty() && is_ascii_space(text.back())) text.remove_suffix(1);
  while (!text.empty() && is_ascii_space(text.front())) text.remove_prefix(1);
  return text;
}

}  // namespace paes
