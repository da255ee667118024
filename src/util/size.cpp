#include "util/size.hpp"

#include <cctype>
#include <limits>

namespace paes {

std::optional<std::uint64_t> parse_size(std::string_view text) {
  std::size_t pos = 0;
  std::uint64_t value = 0;
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
    const auto digit = static_cast<std::uint64_t>(text[pos] - '0');
    if (value > (kMax - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
    ++pos;
  }
  if (pos == 0) return std::nullopt;

  std::string_view suffix = text.substr(pos);
  unsigned shift = 0;
  if (!suffix.empty()) {
    switch (std::toupper(static_cast<unsigned char>(suffix[0]))) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      case 'B': shift = 0; break;
      default: return std::nullopt;
    }
    if (std::toupper(static_cast<unsigned char>(suffix[0])) != 'B') suffix.remove_prefix(1);
    if (suffix == "iB" || suffix == "ib") suffix = {};
    if (suffix == "B" || suffix == "b") suffix = {};
    if (!suffix.empty()) return std::nullopt;
  }
  if (shift != 0 && value > (kMax >> shift)) return std::nullopt;
  return value << shift;
}

}  // namespace paes
