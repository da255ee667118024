#include "util/base64.hpp"

#include <array>

namespace paes {
namespace {

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<std::int8_t, 256> decoding_table() {
  std::array<std::int8_t, 256> table{};
  for (auto& value : table) value = -1;
  for (std::size_t i = 0; i < kAlphabet.size(); ++i) table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<std::int8_t>(i);
  return table;
}
constexpr auto kDecoding = decoding_table();

// Calls put(byte) for each byte that `text` encodes; false when `text` is not
// canonical unpadded base64 (see decode_base64), whatever was put before.
template <typename Put>
bool decode_each(std::string_view text, Put&& put) {
  if (text.size() % 4 == 1) return false;
  std::uint32_t bits = 0;
  int held = 0;  // bits waiting in `bits`
  for (const char c : text) {
    const int value = kDecoding[static_cast<unsigned char>(c)];
    if (value < 0) return false;
    bits = (bits << 6) | static_cast<std::uint32_t>(value);
    held += 6;
    if (held >= 8) {
      held -= 8;
      put(static_cast<std::uint8_t>(bits >> held));
      bits &= (1u << held) - 1;
    }
  }
  // A canonical encoder leaves the bits past the last byte zero (2 or 4 of them).
  return bits == 0;
}

}  // namespace

std::string encode_base64(std::span<const std::uint8_t> bytes) {
  std::string out;
  out.reserve((bytes.size() * 4 + 2) / 3);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = (std::uint32_t{bytes[i]} << 16) | (std::uint32_t{bytes[i + 1]} << 8) | bytes[i + 2];
    for (int shift = 18; shift >= 0; shift -= 6) out.push_back(kAlphabet[(v >> shift) & 63]);
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    std::uint32_t v = std::uint32_t{bytes[i]} << 16;
    if (rest == 2) v |= std::uint32_t{bytes[i + 1]} << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    if (rest == 2) out.push_back(kAlphabet[(v >> 6) & 63]);
  }
  return out;
}

std::optional<std::vector<std::uint8_t>> decode_base64(std::string_view text) {
  std::vector<std::uint8_t> out;
  out.reserve(text.size() * 3 / 4);
  if (!decode_each(text, [&](std::uint8_t byte) { out.push_back(byte); })) return std::nullopt;
  return out;
}

std::optional<SecretBytes> decode_padded_base64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::size_t padding = 0;
  while (padding < 2 && text.size() > padding && text[text.size() - 1 - padding] == '=') ++padding;
  const std::string_view unpadded = text.substr(0, text.size() - padding);
  // The padding completes the last quantum: one '=' after 3 characters, two after 2, none after 4.
  if (padding != (4 - unpadded.size() % 4) % 4) return std::nullopt;
  SecretBytes out(unpadded.size() * 3 / 4);
  std::size_t at = 0;
  if (!decode_each(unpadded, [&](std::uint8_t byte) { out.data()[at++] = byte; })) return std::nullopt;
  return out;
}

}  // namespace paes
