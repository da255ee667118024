#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace paes {

// "4096", "64K", "4M", "1G", "2T" (binary multiples; an optional trailing "B"
// or "iB" is accepted: "64KiB"). Nothing on garbage, zero suffix digits or overflow.
std::optional<std::uint64_t> parse_size(std::string_view text);

}  // namespace paes
