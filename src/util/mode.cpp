#include <string>

#include "paes/error.hpp"
#include "paes/mode.hpp"

namespace paes {
namespace {

struct ModeName {
  Mode mode;
  std::string_view name;
};
constexpr ModeName kModeNames[] = {
    {Mode::ecb, "ecb"},   {Mode::cbc, "cbc"}, {Mode::cfb128, "cfb"}, {Mode::cfb8, "cfb8"},
    {Mode::cfb1, "cfb1"}, {Mode::ofb, "ofb"}, {Mode::ctr, "ctr"},
};

}  // namespace

std::string_view mode_name(Mode mode) {
  for (const auto& entry : kModeNames) {
    if (entry.mode == mode) return entry.name;
  }
  return "?";
}

std::optional<Mode> parse_mode(std::string_view name) {
  for (const auto& entry : kModeNames) {
    if (entry.name == name) return entry.mode;
  }
  if (name == "cfb128") return Mode::cfb128;
  return std::nullopt;
}

std::string_view direction_name(Direction direction) {
  return direction == Direction::encrypt ? "encrypt" : "decrypt";
}

bool mode_uses_iv(Mode mode) { return mode != Mode::ecb; }
bool mode_is_padded(Mode mode) { return mode == Mode::ecb || mode == Mode::cbc; }

void check_key_length(std::size_t key_len) {
  if (key_len != 16 && key_len != 24 && key_len != 32) {
    throw usage_error("key must be 16, 24 or 32 bytes, got " + std::to_string(key_len));
  }
}

Block add_to_counter(const Block& counter, std::uint64_t blocks) {
  Block sum = counter;
  unsigned carry = 0;
  for (std::size_t i = kBlockLen; i-- > 0;) {
    const std::size_t byte_from_right = kBlockLen - 1 - i;
    const unsigned addend =
        byte_from_right < 8 ? static_cast<unsigned>((blocks >> (8 * byte_from_right)) & 0xff) : 0;
    const unsigned total = sum[i] + addend + carry;
    sum[i] = static_cast<std::uint8_t>(total);
    carry = total >> 8;
  }
  return sum;
}

}  // namespace paes
