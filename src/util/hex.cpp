#include "util/hex.hpp"

#include <stdexcept>

namespace paes {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<SecretBytes> decode_hex(std::string_view text) {
  if (text.size() % 2 != 0) return std::nullopt;
  SecretBytes bytes(text.size() / 2);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const int hi = hex_value(text[2 * i]);
    const int lo = hex_value(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    bytes.data()[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return bytes;
}

void encode_hex_into(std::span<const std::uint8_t> bytes, std::span<std::uint8_t> out) {
  static constexpr char kDigits[] = "0123456789abcdef";
  if (out.size() != 2 * bytes.size()) throw std::invalid_argument("encode_hex_into: output is not twice the input");
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    out[2 * i] = static_cast<std::uint8_t>(kDigits[bytes[i] >> 4]);
    out[2 * i + 1] = static_cast<std::uint8_t>(kDigits[bytes[i] & 15]);
  }
}

std::string encode_hex(std::span<const std::uint8_t> bytes) {
  std::string text(2 * bytes.size(), '\0');
  encode_hex_into(bytes, {reinterpret_cast<std::uint8_t*>(text.data()), text.size()});
  return text;
}

}  // namespace paes
