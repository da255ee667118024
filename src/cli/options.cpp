#include "cli/commands.hpp"

#include <algorithm>
#include <sstream>
#include <string_view>

#include "paes/backend.hpp"
#include "paes/engine.hpp"
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

CLI::Validator segment_size_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto value = parse_size(text);
        if (!value) return "'" + text + "' is not a size (examples: 64K, 1M, 4M)";
        // The format's own bound; the lower one depends on the key size and is
        // the library's to check. Above 4G the value would not even fit the
        // format's field, and the library would be shown a clamped one.
        if (*value > (std::uint64_t{64} << 20)) return "segment size must be at most 64M, got " + text;
        return {};
      },
      "");
}

CLI::Validator whole_number_validator(std::uint64_t low, std::uint64_t high) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        // CLI11's Range calls "10K" and "2.0" out of range: say they are not numbers.
        const bool digits = !text.empty() && text.size() <= 19 &&
                            std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (!digits) {
          return "'" + text + "' is not a whole number from " + std::to_string(low) + " to " + std::to_string(high);
        }
        const std::uint64_t value = std::stoull(text);
        if (value < low || value > high) {
          return text + " is out of range: " + std::to_string(low) + " to " + std::to_string(high);
        }
        return {};
      },
      "");
}

CLI::Validator key_bits_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text == "128" || text == "192" || text == "256") return {};
        return "'" + text + "' is not an AES key size: 128, 192 or 256 (bits)";
      },
      "");
}

CLI::Option* add_backend_option(CLI::App& command, std::string& backend) {
  std::vector<std::string> choices{std::string(kAutoBackend)};
  std::string gpus;
  std::string cpu_names;  // "openssl, ipsec-mb, ": the table's order
  for (const CipherBackendName& row : cipher_backend_names()) {
    choices.push_back(row.name);
    if (row.gpu) gpus += (gpus.empty() ? "" : ", ") + row.name;
    if (!row.gpu) cpu_names += row.name + ", ";
  }
  return command
      .add_option("--backend", backend,
                  "What computes AES: auto (ipsec-mb on CPUs with VAES, else OpenSSL; under --engine auto a GPU "
                  "where measured faster), " + cpu_names + "or a GPU (" + gpus +
                  ": ECB, CTR, CBC and CFB128 decryption; the rest on the CPU). Where built in: 'paes info'. "
                  "Same bytes either way")
      ->type_name("NAME")
      ->check(with_choices(CLI::IsMember(choices).description(""), choices))  // the text names the choices
      ->capture_default_str();
}

std::string engine_words() {
  std::string words;
  for (std::string_view rest = compiled_engines(); !rest.empty();) {
    const std::size_t space = rest.find(' ');
    const std::string_view word = rest.substr(0, space);
    words += (words.empty() ? "" : " ") + std::string(word);
    if (word == engine_name(EngineKind::threads)) words += " " + std::string(kAutoEngine);
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
  }
  return words;
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
