#include "cli/commands.hpp"

#include <sstream>
#include <string_view>

#include "paes/backend.hpp"
#include "util/size.hpp"

namespace paes::cli {
namespace {

// The choices ride in the validator's CLI11 name, which nothing prints.
constexpr std::string_view kChoicesName = "choices:";

}  // namespace

CLI::Validator with_choices(CLI::Validator check, const std::vector<std::string>& choices) {
  std::string name(kChoicesName);
  for (const std::string& choice : choices) name += " " + choice;
  check.name(name);
  return check;
}

std::vector<std::string> option_choices(CLI::Option& option) {
  try {
    for (int i = 0;; ++i) {
      const std::string& name = option.get_validator(i)->get_name();
      if (!name.starts_with(kChoicesName)) continue;
      std::vector<std::string> choices;
      std::istringstream words(name.substr(kChoicesName.size()));
      for (std::string word; words >> word;) choices.push_back(word);
      return choices;
    }
  } catch (const CLI::OptionNotFound&) {  // CLI11 2.1 tells the validators' count only this way: past the last
  }
  return {};
}

CLI::Validator size_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto value = parse_size(text);
        if (!value) return "'" + text + "' is not a size (examples: 4096, 64K, 4M, 1G)";
        return {};
      },
      "");  // the option's type name says SIZE; CLI11 would print it twice
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
      "");
}

CLI::Option* add_backend_option(CLI::App& command, std::string& backend) {
  std::vector<std::string> choices{std::string(kAutoBackend)};
  std::string gpus;
  for (const CipherBackendName& row : cipher_backend_names()) {
    choices.push_back(row.name);
    if (row.gpu) gpus += (gpus.empty() ? "" : ", ") + row.name;
  }
  return command
      .add_option("--backend", backend,
                  "What computes AES: auto (ipsec-mb on CPUs with VAES, else OpenSSL; under --engine auto a GPU "
                  "where measured faster), openssl, ipsec-mb, or a GPU (" + gpus +
                  ": ECB, CTR, CBC and CFB128 decryption; the rest on the CPU). Where built in: 'paes info'. "
                  "Same bytes either way")
      ->type_name("NAME")
      ->envname("PAES_BACKEND")
      ->check(with_choices(CLI::IsMember(choices).description(""), choices))  // the text names the choices
      ->capture_default_str();
}

bool names_gpu_backend(std::string_view name) {
  for (const CipherBackendName& row : cipher_backend_names()) {
    if (row.gpu && row.name == name) return true;
  }
  return false;
}

std::uint64_t size_value(const std::string& text) { return parse_size(text).value_or(0); }

std::optional<SealedRange> parse_range(const std::string& text) {
  SealedRange range;
  std::string_view rest = text;
  range.from_end = rest.starts_with('-');
  if (range.from_end) rest.remove_prefix(1);
  const std::size_t colon = rest.find(':');
  const auto offset = parse_size(rest.substr(0, colon));
  if (!offset) return std::nullopt;
  range.offset = *offset;
  if (colon == std::string_view::npos || colon + 1 == rest.size()) return range;
  const auto length = parse_size(rest.substr(colon + 1));
  if (!length) return std::nullopt;
  range.length = *length;
  return range;
}

}  // namespace paes::cli
