#include "cli/commands.hpp"
#include "util/size.hpp"

namespace paes::cli {

CLI::Validator size_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto value = parse_size(text);
        if (!value) return "'" + text + "' is not a size (examples: 4096, 64K, 4M, 1G)";
        return {};
      },
      "SIZE");
}

CLI::Validator chunk_size_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto value = parse_size(text);
        if (!value) return "'" + text + "' is not a size (examples: 64K, 1M, 4M)";
        if (*value < 16 || *value > (std::uint64_t{1} << 30)) {
          return "chunk size must be between 16 bytes and 1G, got " + text;
        }
        return {};
      },
      "SIZE");
}

std::uint64_t size_value(const std::string& text) { return parse_size(text).value_or(0); }

}  // namespace paes::cli
