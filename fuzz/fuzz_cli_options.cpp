// The paes command line on arbitrary words: the input split on NUL and
// newline into argv (after "paes"), parsed by the same CommandLine the binary
// uses, every subcommand, option, validator and size included, without
// running the command. Each word is also given to parse_size. Parsing must
// end in a command or a one-line usage error (or help text), never a crash
// or an exception; an accepted size must print back as the same number.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command_line.hpp"
#include "util/size.hpp"

namespace {

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_cli_options: %s\n", what);
    std::abort();
  }
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words{"paes"};
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '\0' || text[i] == '\n') {
      words.emplace_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return words;
}

void check_size(const std::string& word) {
  const auto value = paes::parse_size(word);
  if (value) require(paes::parse_size(std::to_string(*value)) == value, "a size does not print back");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string> words =
      split_words(std::string_view(reinterpret_cast<const char*>(data), size));
  std::vector<const char*> argv;
  for (const auto& word : words) {
    argv.push_back(word.c_str());
    check_size(word);
  }

  paes::cli::CommandLine command_line;
  const paes::cli::ParseOutcome outcome = command_line.parse(static_cast<int>(argv.size()), argv.data());
  if (outcome.command == paes::cli::Command::none) {
    require(outcome.exit_status == 0 || outcome.exit_status == 2, "exit status is neither 0 nor 2");
    require(outcome.exit_status == 0 ? outcome.error.empty() : !outcome.error.empty(),
            "a usage error without a message, or help with one");
    require(outcome.error.find('\n') == std::string::npos, "a usage error longer than one line");
  }
  return 0;
}
