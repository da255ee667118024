// The paes command line: the CLI11 app with every subcommand and the structs
// their options fill. Parsing and running are separate steps so that the
// parse alone can be tested and fuzzed: parse() reads no terminal, stdin,
// environment variable or file, and writes nothing.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>

#include "cli/commands.hpp"

namespace paes::cli {

enum class Command { none, encrypt, decrypt, bench, info, keygen, rekey, inspect, completion, man };

struct ParseOutcome {
  // The subcommand to run; none when parsing ended without one (help,
  // version or a usage error).
  Command command = Command::none;
  // With no command: 0 after --help or --version, 2 after a usage error.
  int exit_status = 0;
  std::string out;  // --help or --version text, for stdout
  std::string error;  // the one-line usage error, for stderr after "paes: "
};

class CommandLine {
 public:
  // Every command, or with `only_command` naming one that runs a job
  // (encrypt, decrypt, bench, info, keygen, rekey, inspect), that command
  // alone: building all of them was a tenth of a small job's run. A command
  // line that names it but is not one to run (help, an error) is to be
  // parsed again with every command, whose words its help and errors use.
  explicit CommandLine(std::string_view only_command = {});
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  // Parses argv (argv[0] is the program's name). Every malformed command line
  // becomes an outcome with exit status 2; nothing is thrown for user input.
  // Call once per CommandLine.
  ParseOutcome parse(int argc, const char* const* argv);

  // Runs the command parse() chose and returns its exit status. Throws
  // paes::Error for a failed operation.
  int run(Command command);

  // Whether it holds one command only (the constructor's `only_command`).
  bool partial() const { return partial_; }

 private:
  // "unknown command 'NAME': the commands are ...", naming the visible ones.
  std::string unknown_command(const std::string& name) const;
  CLI::App app_;
  TransformArgs encrypt_args_;
  TransformArgs decrypt_args_;
  BenchArgs bench_args_;
  InfoArgs info_args_;
  KeygenArgs keygen_args_;
  RekeyArgs rekey_args_;
  InspectArgs inspect_args_;
  DocsArgs docs_args_;
  bool partial_ = false;
  CLI::App* encrypt_ = nullptr;  // each null where a partial command line lacks it
  CLI::App* decrypt_ = nullptr;
  CLI::App* bench_ = nullptr;
  CLI::App* info_ = nullptr;
  CLI::App* keygen_ = nullptr;
  CLI::App* rekey_ = nullptr;
  CLI::App* inspect_ = nullptr;
  CLI::App* completion_ = nullptr;
  CLI::App* man_ = nullptr;
};

}  // namespace paes::cli
