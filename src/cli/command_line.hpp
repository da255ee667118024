// The paes command line: the CLI11 app with every subcommand and the structs
// their options fill. Parsing and running are separate steps so that the
// parse alone can be tested and fuzzed: parse() reads no terminal, stdin,
// environment variable or file, and writes nothing.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

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
  CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  // Parses argv (argv[0] is the program's name). Every malformed command line
  // becomes an outcome with exit status 2; nothing is thrown for user input.
  // Call once per CommandLine.
  ParseOutcome parse(int argc, const char* const* argv);

  // Runs the command parse() chose and returns its exit status. Throws
  // paes::Error for a failed operation.
  int run(Command command);

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
  CLI::App* encrypt_;
  CLI::App* decrypt_;
  CLI::App* bench_;
  CLI::App* info_;
  CLI::App* keygen_;
  CLI::App* rekey_;
  CLI::App* inspect_;
  CLI::App* completion_;
  CLI::App* man_;
};

}  // namespace paes::cli
