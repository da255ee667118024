// The man page and the shell completions, written from the CLI11 app itself
// (its subcommands, options, type names, descriptions and choices), so that
// neither can say other than --help. Only the man page's prose sections are
// written here by hand. CLI11 2.1 has no generator of its own.
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"

namespace paes::cli {
namespace {

// What the documents show of one option.
struct OptionDoc {
  std::vector<std::string> names;  // "-m", "--mode"; empty for a positional
  std::string positional;          // "input"
  std::string type;                // "MODE"; empty for a flag
  std::string description;
  std::vector<std::string> choices;
  std::string default_value;
  std::string env;
  bool repeatable = false;
};

struct CommandDoc {
  std::string name;
  std::string description;
  std::vector<OptionDoc> options;
};

// The options --help shows: those in a group (CLI11 hides the group "").
std::vector<OptionDoc> option_docs(CLI::App& command) {
  std::vector<OptionDoc> docs;
  for (CLI::Option* option : command.get_options({})) {
    if (option->get_group().empty()) continue;
    OptionDoc doc;
    for (const std::string& name : option->get_snames()) doc.names.push_back("-" + name);
    for (const std::string& name : option->get_lnames()) doc.names.push_back("--" + name);
    if (option->get_positional()) doc.positional = option->get_name();
    if (option->get_items_expected_max() != 0) doc.type = option->get_type_name();
    doc.description = option->get_description();
    doc.choices = option_choices(*option);
    doc.default_value = option->get_default_str();
    doc.env = option->get_envname();
    doc.repeatable = option->get_expected_max() > 1;
    docs.push_back(std::move(doc));
  }
  return docs;
}

// The subcommands --help lists (a subcommand in the group "" is hidden).
std::vector<CommandDoc> command_docs(CLI::App& app) {
  std::vector<CommandDoc> docs;
  for (CLI::App* command : app.get_subcommands({})) {
    if (command->get_group().empty()) continue;
    docs.push_back({command->get_name(), command->get_description(), option_docs(*command)});
  }
  return docs;
}

std::string join(const std::vector<std::string>& words, const std::string& between) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : between) + word;
  return text;
}

// Whether an option's value names a file (its type as --help shows it):
// only then do the completions offer file names. A recipient, a mode list or
// associated data text completed as file names only misleads.
bool names_a_file(const OptionDoc& option) {
  const std::string& type = option.type;
  return type == "PATH" || type == "FILE" || type == "OUTPUT" || type == "INPUT" || type.ends_with("-FILE");
}

// ---- bash ----

// A word list for compgen -W, in single quotes.
std::string bash_words(const std::vector<std::string>& words) { return "'" + join(words, " ") + "'"; }

// `top` is paes itself (--help, --version), `commands` its subcommands.
std::string bash_script(const CommandDoc& top, const std::vector<CommandDoc>& commands) {
  std::vector<std::string> names;
  for (const CommandDoc& command : commands) names.push_back(command.name);
  for (const OptionDoc& option : top.options) names.insert(names.end(), option.names.begin(), option.names.end());
  std::ostringstream out;
  out << "# bash completion for paes, written by 'paes completion bash' from its command line\n"
         "_paes() {\n"
         "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} command='' i\n"
         "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "    case ${COMP_WORDS[i]} in\n"
         "      " << join(names, "|") << ") command=${COMP_WORDS[i]}; break ;;\n"
         "    esac\n"
         "  done\n"
         "  local options='' operands=''\n"
         "  case $command in\n"
         "    '') mapfile -t COMPREPLY < <(compgen -W " << bash_words(names) << " -- \"$cur\")\n"
         "        return ;;\n";
  for (const CommandDoc& command : commands) {
    std::vector<std::string> option_names;
    out << "    " << command.name << ")\n      case $prev in\n";
    for (const OptionDoc& option : command.options) {
      option_names.insert(option_names.end(), option.names.begin(), option.names.end());
      if (option.names.empty() || option.type.empty()) continue;
      out << "        " << join(option.names, "|") << ")\n          ";
      if (option.choices.empty() && names_a_file(option)) {
        out << "mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")";
      } else if (option.choices.empty()) {  // a value to type: nothing, not even bash's default of file names
        out << "COMPREPLY=(); compopt +o bashdefault +o default 2>/dev/null";
      } else {
        out << "mapfile -t COMPREPLY < <(compgen -W " << bash_words(option.choices) << " -- \"$cur\")";
      }
      out << "\n          return ;;\n";
    }
    out << "      esac\n      options=" << bash_words(option_names);
    for (const OptionDoc& option : command.options) {
      if (option.names.empty() && !option.choices.empty()) out << " operands=" << bash_words(option.choices);
    }
    out << " ;;\n";
  }
  out << "  esac\n"
         "  if [[ $cur == -* ]]; then\n"
         "    mapfile -t COMPREPLY < <(compgen -W \"$options\" -- \"$cur\")\n"
         "  elif [[ -n $operands ]]; then\n"
         "    mapfile -t COMPREPLY < <(compgen -W \"$operands\" -- \"$cur\")\n"
         "  else\n"
         "    mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
         "  fi\n"
         "}\n"
         "complete -o filenames -o bashdefault -F _paes paes\n";
  return out.str();
}

// ---- zsh ----

// Text inside an _arguments spec's single quotes and [brackets].
std::string zsh_text(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '\'') out += "'\\''";
    else if (c == '[' || c == ']' || c == ':' || c == '\\') out += std::string("\\") + c;
    else out += c;
  }
  return out;
}

std::string zsh_option_spec(const OptionDoc& option) {
  std::string action = !option.choices.empty() ? "(" + join(option.choices, " ") + ")"
                       : names_a_file(option) || option.names.empty() ? "_files"
                                                                       : " ";
  if (option.names.empty()) return "'*:" + zsh_text(option.type) + ":" + action + "'";
  std::string spec = option.repeatable ? "'*'" : "'(" + join(option.names, " ") + ")'";
  spec += option.names.size() == 1 ? option.names.front() : "{" + join(option.names, ",") + "}";
  spec += "'[" + zsh_text(option.description) + "]";
  if (!option.type.empty()) spec += ":" + zsh_text(option.type) + ":" + action;
  return spec + "'";
}

std::string zsh_script(const CommandDoc& top, const std::vector<CommandDoc>& commands) {
  std::ostringstream out;
  out << "#compdef paes\n"
         "# zsh completion for paes, written by 'paes completion zsh' from its command line\n"
         "_paes() {\n"
         "  local curcontext=$curcontext state line\n"
         "  typeset -A opt_args\n"
         "  _arguments -C";
  for (const OptionDoc& option : top.options) out << " \\\n    " << zsh_option_spec(option);
  out << " \\\n    '1:command:->command' '*::argument:->argument'\n"
         "  case $state in\n"
         "    command)\n"
         "      local -a commands=(\n";
  for (const CommandDoc& command : commands) {
    std::string description;
    for (const char c : command.description) {
      if (c == ':') description += "\\:";
      else if (c == '\'') description += "'\\''";
      else description += c;
    }
    out << "        '" << command.name << ":" << description << "'\n";
  }
  out << "      )\n"
         "      _describe command commands ;;\n"
         "    argument)\n"
         "      case $line[1] in\n";
  for (const CommandDoc& command : commands) {
    out << "        " << command.name << ")\n          _arguments";
    for (const OptionDoc& option : command.options) out << " \\\n            " << zsh_option_spec(option);
    out << " ;;\n";
  }
  out << "      esac ;;\n"
         "  esac\n"
         "}\n"
         // Autoloaded from $fpath (#compdef), the file is the function's body
         // run at the first completion; sourced (source <(paes completion
         // zsh), as README says), it only defines _paes and registers it.
         "if [[ $funcstack[1] == _paes ]]; then\n"
         "  _paes \"$@\"\n"
         "else\n"
         "  compdef _paes paes\n"
         "fi\n";
  return out.str();
}

// ---- man ----

// Text for a roff line: backslashes escaped, hyphens as \- where they are
// options (every hyphen: a page is searched and copied from), and a line that
// would begin with a control character protected.
std::string roff(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out += c;
  }
  if (!out.empty() && (out.front() == '.' || out.front() == '\'')) out.insert(0, "\\&");
  return out;
}

constexpr const char* kManDescription = R"ROFF(.SH DESCRIPTION
.B paes
encrypts and decrypts large files and streams with AES on every core.
.PP
By default it
.IR seals :
authenticated AES\-256\-GCM in 1 MiB segments, the body in Google Tink's
AES\-GCM\-HKDF streaming format, so any change, truncation or reordering is
detected, and Tink can read it.
Its raw modes
.RB ( \-\-mode )
give exactly the bytes
.B openssl enc
gives (ECB, CBC, CFB, CFB8, CFB1, OFB and CTR, AES\-128/192/256, also with
.B \-pbkdf2
passphrases) whatever the thread count or chunk size, so openssl can read what
paes writes and the reverse.
.PP
Output never appears under its final name until it is complete; an existing
output is replaced only with
.BR \-f .
Sizes are bytes, or K, M, G, T (powers of 1024).
Run
.B paes
.I command
.B \-\-help
for each command's notes and examples.
)ROFF";

constexpr const char* kManTail = R"ROFF(.SH EXIT STATUS
.TP
.B 0
Success.
.TP
.B 1
A failed operation: bad input data, an I/O error, a failed decryption.
.TP
.B 2
A usage error: an option or its value, a file in the wrong role or one that
holds no key, passphrase, recipient or identity, binary output to a terminal.
.PP
Errors are one line on standard error.
SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGPIPE remove the temporary output and
end paes by that signal (a shell shows 130, 143, 129, 131 and 141).
.SH ENVIRONMENT
.TP
.B PAES_BACKEND
The default of
.B \-\-backend
for encrypt and decrypt (no other command reads it). A GPU named for the
sealed format, whose AES-GCM runs on the CPU, is a note, not an error.
.TP
.B PAES_CACHE_DIR
Where
.B \-\-engine auto
keeps its measured GPU and CPU rates; else
.IR $XDG_CACHE_HOME/paes ,
else
.IR ~/.cache/paes .
.TP
.BR XDG_CACHE_HOME ", " HOME
See
.BR PAES_CACHE_DIR .
.TP
.BR PMI_SIZE ", " PMI_RANK ", " OMPI_COMM_WORLD_SIZE ", " OMPI_COMM_WORLD_RANK
Set by MPI launchers: under
.B mpiexec
with several ranks, encrypt and decrypt need
.BR "\-\-engine mpi" .
.TP
.B OCL_ICD_VENDORS
Where the OpenCL loader looks for devices.
.PP
.B \-\-key\-env
and
.B \-\-passphrase\-env
name a variable of the caller's choosing.
.SH FILES
.TP
.I paes\-mpi
Installed beside
.BR paes ,
which runs it for
.BR "\-\-engine mpi" .
.TP
.I $PAES_CACHE_DIR
The rate cache of
.BR "\-\-engine auto" .
.TP
.I .NAME.paes\-XXXXXX
The output being written, beside NAME, renamed to NAME when complete. One
that SIGKILL or a power loss left behind is removed, with a note, by the next
paes writing into its directory once it is a minute old; one a live paes
writes is locked, and never removed.
.SH EXAMPLES
A key file, a sealed file, and back; what a sealed file is, without its key;
a passphrase through a pipe; a file sealed to an X25519 recipient; raw
AES\-256\-CTR, byte\-identical to
.BR "openssl enc \-aes\-256\-ctr" :
.PP
.nf
paes keygen \-o backup.key
paes encrypt \-\-key\-file backup.key data.tar \-o data.tar.paes
paes decrypt \-\-key\-file backup.key data.tar.paes \-o restored.tar
paes inspect data.tar.paes
tar c photos/ | paes encrypt \-\-passphrase\-file pass.txt > photos.tar.paes
paes keygen \-\-x25519 \-o alice.key
paes keygen \-y alice.key > alice.txt
paes encrypt \-R alice.txt data.tar \-o data.tar.alice
paes decrypt \-i alice.key data.tar.alice \-o from\-alice.tar
openssl rand 32 > aes.key
IV=$(openssl rand \-hex 16)
paes encrypt \-\-mode ctr \-\-key\-file aes.key \-\-iv "$IV" data.tar \-o data.ctr
.fi
.SH SEE ALSO
.BR openssl\-enc (1),
.BR age (1)
)ROFF";

// Whether the description already names every choice (most do, in words).
bool names_all(const std::string& description, const std::vector<std::string>& choices) {
  for (const std::string& choice : choices) {
    if (description.find(choice) == std::string::npos) return false;
  }
  return true;
}

std::string man_page(CLI::App& app, const std::vector<CommandDoc>& commands) {
  std::ostringstream out;
  std::string summary = app.get_description();
  summary = summary.substr(summary.find(": ") + 2);
  out << ".TH PAES 1 \"\" \"paes " PAES_VERSION "\" \"User Commands\"\n"
         ".SH NAME\n"
         "paes \\- " << roff(summary) << "\n"
         ".SH SYNOPSIS\n";
  for (const CommandDoc& command : commands) {
    out << ".B paes " << command.name << "\n[\\fIoptions\\fR]";
    for (const OptionDoc& option : command.options) {
      if (option.names.empty()) out << " [\\fI" << roff(option.type) << "\\fR]";
    }
    out << "\n.br\n";
  }
  out << ".B paes \\-\\-help\n.br\n.B paes \\-\\-version\n" << kManDescription << ".SH COMMANDS\n";
  for (const CommandDoc& command : commands) {
    out << ".SS " << command.name << "\n" << roff(command.description) << ".\n";
    for (const OptionDoc& option : command.options) {
      out << ".TP\n";
      std::vector<std::string> names;
      for (const std::string& name : option.names) names.push_back("\\fB" + roff(name) + "\\fR");
      if (!option.names.empty()) out << join(names, ", ");
      if (!option.type.empty()) out << (option.names.empty() ? "" : " ") << "\\fI" << roff(option.type) << "\\fR";
      if (option.repeatable) out << " ...";
      out << "\n" << roff(option.description);
      if (!names_all(option.description, option.choices)) out << " (one of: " << roff(join(option.choices, ", ")) << ")";
      if (!option.default_value.empty()) out << " (default: " << roff(option.default_value) << ")";
      if (!option.env.empty()) out << " (default from \\fB" << roff(option.env) << "\\fR)";
      out << "\n";
    }
  }
  out << kManTail;
  return out.str();
}

}  // namespace

CLI::App* add_completion_command(CLI::App& app, DocsArgs& args) {
  CLI::App* cmd = app.add_subcommand("completion", "Print a shell completion script (bash or zsh)");
  cmd->footer(R"TXT(Examples:
  source <(paes completion bash)                      # this shell
  paes completion zsh > ~/.zfunc/_paes                # a directory in $fpath
An installed paes has them in share/bash-completion/completions/paes and
share/zsh/site-functions/_paes already.)TXT");
  cmd->add_option("shell", args.shell, "bash or zsh")
      ->type_name("SHELL")
      ->required()
      ->check(with_choices(CLI::IsMember({"bash", "zsh"}).description(""), {"bash", "zsh"}));
  return cmd;
}

CLI::App* add_man_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("man", "Print the man page (roff); the build installs it as paes.1");
  cmd->group("");  // for the build, not for users: man paes
  return cmd;
}

int run_completion(const DocsArgs& args, CLI::App& app) {
  const CommandDoc top{app.get_name(), app.get_description(), option_docs(app)};
  const std::vector<CommandDoc> commands = command_docs(app);
  std::cout << (args.shell == "zsh" ? zsh_script(top, commands) : bash_script(top, commands));
  return 0;
}

int run_man(CLI::App& app) {
  std::cout << man_page(app, command_docs(app));
  return 0;
}

}  // namespace paes::cli
