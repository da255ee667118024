#include "cli/command_line.hpp"

#include <algorithm>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace paes::cli {
namespace {

constexpr const char* kFooter = R"(Examples:
  paes encrypt --mode ctr --key-file aes.key --iv 000102030405060708090a0b0c0d0e0f data.bin -o data.ctr
  paes decrypt --mode ctr --key-file aes.key --iv 000102030405060708090a0b0c0d0e0f data.ctr -o data.bin
  paes encrypt --mode cbc --key-file aes.key --iv "$IV" --threads 4 backup.tar -o backup.tar.cbc
  paes info
  paes bench --size 256M --modes ctr,cbc

Every raw mode gives exactly the bytes of
  openssl enc [-d] -aes-<bits>-<mode> -K <key hex> -iv <iv hex> [-nopad]
whatever the engine, thread count or chunk size.

Exit status: 0 success, 1 a failed operation (bad input data, I/O error,
bad decrypt), 2 a wrong invocation (an option or its value, a file in the
wrong role, a bad recipient, binary output to a terminal). Errors are one
line on stderr.
Run 'paes <command> --help' for each command's options.)";

}  // namespace

CommandLine::CommandLine(std::string_view only_command)
    : app_("paes: parallel AES for bulk data, byte-identical to openssl enc", "paes") {
  app_.footer(kFooter);
  app_.require_subcommand(1);
  app_.set_version_flag("-V,--version", "paes " PAES_VERSION);
  // completion and man describe every command, so they are never alone.
  constexpr std::string_view kAlone[] = {"encrypt", "decrypt", "bench", "info", "keygen", "rekey", "inspect"};
  partial_ = std::find(std::begin(kAlone), std::end(kAlone), only_command) != std::end(kAlone);
  const auto wanted = [&](std::string_view name) { return !partial_ || name == only_command; };
  if (wanted("encrypt")) encrypt_ = add_transform_command(app_, Direction::encrypt, encrypt_args_);
  if (wanted("decrypt")) decrypt_ = add_transform_command(app_, Direction::decrypt, decrypt_args_);
  if (wanted("bench")) bench_ = add_bench_command(app_, bench_args_);
  if (wanted("info")) info_ = add_info_command(app_, info_args_);
  if (wanted("keygen")) keygen_ = add_keygen_command(app_, keygen_args_);
  if (wanted("rekey")) rekey_ = add_rekey_command(app_, rekey_args_);
  if (wanted("inspect")) inspect_ = add_inspect_command(app_, inspect_args_);
  if (!partial_) {
    completion_ = add_completion_command(app_, docs_args_);
    man_ = add_man_command(app_);
  }
}

namespace {

// The first option (or the input) given an empty value, by name; "" if none.
// An empty value is almost always an unset shell variable ("-k $KEYFILE"),
// and taken as given it changes the meaning: -k "" became no key (and a
// passphrase prompt), -o "" and an input "" became stdout and stdin. Only
// --aad may be empty: empty associated data is associated data.
std::string first_empty_value(const CLI::App& command) {
  for (const CLI::Option* option : command.get_options()) {
    if (option->get_items_expected_max() == 0 || option->get_name() == "--aad" || option->count() == 0) continue;
    for (const std::string& value : option->results()) {
      if (value.empty()) return option->get_name();
    }
  }
  return {};
}

// For CLI11's "arguments were not expected: notes.txt -i", which blames the
// value of an option the command doesn't have: the first such option that
// another command has, named with the commands that take it; "" if none.
std::string option_of_another_command(const CLI::App& app, const CLI::App& command, int argc,
                                      const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (command.get_option_no_throw(name) != nullptr) continue;
    std::string owners;
    const CLI::Option* known = nullptr;
    for (const CLI::App* other : app.get_subcommands({})) {
      const CLI::Option* option = other->get_option_no_throw(name);
      if (option == nullptr || other == &command) continue;
      // The same option, not another one under that name (bench's -r is --repeat).
      if (known != nullptr && option->get_name() != known->get_name()) continue;
      known = option;
      owners += (owners.empty() ? "" : ", ") + other->get_name();
    }
    if (known == nullptr) continue;
    std::string aliases;  // its other names: "-i (--identity)"
    for (const std::string& n : known->get_snames()) {
      if ("-" + n != name) aliases += (aliases.empty() ? "-" : ", -") + n;
    }
    for (const std::string& n : known->get_lnames()) {
      if ("--" + n != name) aliases += (aliases.empty() ? "--" : ", --") + n;
    }
    if (const std::size_t comma = owners.rfind(", "); comma != std::string::npos) owners.replace(comma, 2, " and ");
    return name + (aliases.empty() ? "" : " (" + aliases + ")") + " is an option of " + owners + ", not of " +
           command.get_name();
  }
  return {};
}

// The edit distance of a and b (insertions, deletions, substitutions and
// swaps of neighbours), for names of a few dozen characters.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

// For CLI11's "arguments were not expected: x --mdoe": the first long option
// the command doesn't have, with the one of its own it most likely meant
// (within two edits), as git says "did you mean"; "" if none is that close.
std::string mistyped_option(const CLI::App& command, int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (!arg.starts_with("--")) continue;
    const std::string name(arg.substr(0, arg.find('=')));
    if (command.get_option_no_throw(name) != nullptr) continue;
    std::string best;
    std::size_t best_distance = 3;
    for (const CLI::Option* option : command.get_options()) {
      for (const std::string& long_name : option->get_lnames()) {
        const std::size_t distance = edit_distance(name.substr(2), long_name);
        if (distance < best_distance) {
          best_distance = distance;
          best = "--" + long_name;
        }
      }
    }
    if (best.empty()) return name + " is not an option of " + command.get_name();
    return name + " is not an option of " + command.get_name() + ": did you mean " + best + "?";
  }
  return {};
}

}  // namespace

std::string CommandLine::unknown_command(const std::string& name) const {
  std::string commands;
  for (const CLI::App* sub : app_.get_subcommands({})) {
    if (!sub->get_group().empty()) commands += (commands.empty() ? "" : ", ") + sub->get_name();  // not hidden ones
  }
  return "unknown command '" + name + "': the commands are " + commands + " (see 'paes --help')";
}

ParseOutcome CommandLine::parse(int argc, const char* const* argv) {
  // `paes help [COMMAND]`, as git and go have it: the help page it names.
  std::vector<const char*> help_args;
  if (argc == 3 && std::string_view(argv[1]) == "help") {
    const auto subcommands = app_.get_subcommands({});
    const bool known = std::any_of(subcommands.begin(), subcommands.end(),
                                   [&](const CLI::App* sub) { return sub->get_name() == argv[2]; });
    if (!known) return {Command::none, 2, "", unknown_command(argv[2])};
  }
  if (argc >= 2 && std::string_view(argv[1]) == "help" && argc <= 3) {
    help_args = {argv[0]};
    if (argc == 3) help_args.push_back(argv[2]);
    help_args.push_back("--help");
    argc = static_cast<int>(help_args.size());
    argv = help_args.data();
  }
  ParseOutcome outcome;
  try {
    app_.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    std::ostringstream out, err;
    outcome.exit_status = app_.exit(e, out, err);
    outcome.out = out.str();
    return outcome;
  } catch (const CLI::ParseError& e) {
    outcome.exit_status = 2;
    outcome.error = e.what();
    // CLI11 says "A subcommand is required" for a mistyped one: name it.
    if (app_.get_subcommands().empty() && argc > 1 && argv[1][0] != '-') {
      outcome.error = unknown_command(argv[1]);
      return outcome;
    }
    for (const CLI::App* sub : app_.get_subcommands()) {
      if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
        if (std::string other = option_of_another_command(app_, *sub, argc, argv); !other.empty()) {
          outcome.error = std::move(other);
        } else if (std::string typo = mistyped_option(*sub, argc, argv); !typo.empty()) {
          outcome.error = std::move(typo);
        }
      }
      outcome.error += " (see 'paes " + sub->get_name() + " --help')";
    }
    if (app_.get_subcommands().empty()) outcome.error += " (see 'paes --help')";
    return outcome;
  }
  for (const CLI::App* sub : app_.get_subcommands()) {
    if (const std::string empty = first_empty_value(*sub); !empty.empty()) {
      outcome.exit_status = 2;
      outcome.error = empty + " is empty (an unset variable?): give a value, or leave the option out (see 'paes " +
                      sub->get_name() + " --help')";
      return outcome;
    }
  }
  const auto parsed = [](const CLI::App* command) { return command != nullptr && command->parsed(); };
  if (parsed(encrypt_)) outcome.command = Command::encrypt;
  else if (parsed(decrypt_)) outcome.command = Command::decrypt;
  else if (parsed(bench_)) outcome.command = Command::bench;
  else if (parsed(info_)) outcome.command = Command::info;
  else if (parsed(keygen_)) outcome.command = Command::keygen;
  else if (parsed(rekey_)) outcome.command = Command::rekey;
  else if (parsed(inspect_)) outcome.command = Command::inspect;
  else if (parsed(completion_)) outcome.command = Command::completion;
  else if (parsed(man_)) outcome.command = Command::man;
  else {
    outcome.exit_status = 2;
    outcome.error = "no command given (see 'paes --help')";
  }
  return outcome;
}

int CommandLine::run(Command command) {
  switch (command) {
    case Command::encrypt: return run_transform(Direction::encrypt, encrypt_args_, *encrypt_);
    case Command::decrypt: return run_transform(Direction::decrypt, decrypt_args_, *decrypt_);
    case Command::bench: return run_bench(bench_args_);
    case Command::info: return run_info(info_args_);
    case Command::keygen: return run_keygen(keygen_args_);
    case Command::rekey: return run_rekey(rekey_args_);
    case Command::inspect: return run_inspect(inspect_args_);
    case Command::completion: return run_completion(docs_args_, app_);
    case Command::man: return run_man(app_);
    case Command::none: break;
  }
  return 2;
}

}  // namespace paes::cli
