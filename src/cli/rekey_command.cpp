// paes rekey: who can open a file sealed to recipients, changed without
// re-encrypting it (rekey_sealed, paes/sealed.hpp).
#include <sys/stat.h>

#include <sstream>
#include <string>

#include "cli/commands.hpp"
#include "cli/key_source.hpp"
#include "cli/passphrase.hpp"
#include "cli/say.hpp"
#include "cli/terminal_ui.hpp"
#include "paes/endpoint.hpp"
#include "paes/error.hpp"
#include "paes/data_set.hpp"
#include "paes/sealed.hpp"
#include "util/printable.hpp"

namespace paes::cli {

CLI::App* add_rekey_command(CLI::App& app, RekeyArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "rekey", "Change the recipients of a file sealed to recipients, without re-encrypting it");
  cmd->footer(R"TXT(Examples:
  paes rekey -i alice.key --add -r age1...bob data.tar.paes -o data.tar.paes -f   # bob can now open it too
  paes rekey -i alice.key -R team.txt data.tar.paes -o data.new.paes              # exactly the recipients in team.txt

An identity that opens the file (its header MAC verified) gives the file key;
the header is written again with the new stanzas, and every byte of the body
is copied unchanged (in the kernel, file to file) after every segment of it
authenticated, so a damaged or truncated file is refused, not passed on. A
file sealed with --aad is re-keyed with the same --aad: the header's MAC
covers it.
With --add the file's recipients stay and the new ones join them; without it,
the recipients given are the new, complete list.

Removing a recipient is NOT revocation. Whoever could open the file before
knows its file key and can still open it, or a copy of its old header. To
shut someone out, decrypt and encrypt again (a new file key). The output is
written beside its target and renamed when complete, as every paes output;
replacing the input itself takes -f.
Several INPUTs are each re-keyed in place, side by side (-f says so; no -o):
  paes rekey -i alice.key --add -r age1...bob -f backups/*.paes
one line for each that fails, the others done; the status is 1 if any failed.)TXT");
  cmd->add_option("input", args.inputs,
                  "Sealed file to re-key ('-' or none: standard input); several: each replaced in place (-f)")
      ->type_name("INPUT...");
  cmd->add_option("-o,--output", args.output, "Re-keyed file ('-' or none: standard output)")->type_name("OUTPUT");
  cmd->add_option("-i,--identity", args.identities,
                  "Identity file that opens the input (age-keygen's or 'paes keygen --x25519'); repeatable; "
                  "'-': standard input (the input must then be a file)")
      ->type_name("PATH")
      ->allow_extra_args(false)
      ->required();
  cmd->add_option("-r,--recipient", args.recipients, "A recipient (age1...) of the output; repeatable")
      ->type_name("RECIPIENT")
      ->allow_extra_args(false);
  cmd->add_option("-R,--recipients-file", args.recipients_files,
                  "File of recipients, one a line ('#' comments); repeatable; '-': standard input (the input "
                  "must then be a file)")
      ->type_name("PATH")
      ->allow_extra_args(false);
  add_associated_data_options(*cmd, args.aad, args.aad_file);
  cmd->add_flag("--add", args.add, "Keep the file's recipients and add these (else: these replace them)");
  cmd->add_flag("-a,--armor", args.armor,
                "Write the re-keyed file as text (paes' armor, as encrypt -a writes). An armored input is "
                "recognised by itself; its body is decoded and copied, not shared in the kernel");
  cmd->add_flag("-f,--force", args.force, "Overwrite an existing output (the input itself included)");
  cmd->add_flag("-v,--verbose", args.verbose, "A summary on stderr when done");
  return cmd;
}

namespace {

// Several files, each re-keyed over itself, side by side (paes/data_set.hpp).
int rekey_in_place(const RekeySpec& spec, const RekeyArgs& args, const TransformOptions& options) {
  std::vector<DataSetFile> files;
  for (const std::string& path : args.inputs) {
    struct stat st {};
    const bool found = ::stat(path.c_str(), &st) == 0;
    files.push_back({path, path, found ? static_cast<std::uint64_t>(st.st_size) : 0,
                     found ? "" : system_error(path).what()});
  }
  DataSetOptions set_options;
  set_options.transform = options;
  set_options.on_file = [](const DataSetOutcome& outcome) {
    if (outcome.error) say("paes: " + printable(outcome.error->what()) + in_flags(outcome.error->remedy()) + '\n');
  };
  const auto rekey = [&spec](const std::string& in, const std::string& out, const TransformOptions& file_options) {
    const RekeyReport rekeyed = rekey_sealed(spec, in, out, file_options);
    TransformReport report;
    report.bytes_in = rekeyed.body_bytes;
    report.bytes_out = rekeyed.body_bytes;
    report.seconds = rekeyed.seconds;
    return report;
  };
  const DataSetReport report = run_data_set(files, rekey, set_options);
  if (args.verbose) {
    say("paes: rekey: " + std::to_string(report.done) + (report.done == 1 ? " file" : " files") + " re-keyed" +
        (report.failed != 0 ? ", " + std::to_string(report.failed) + " failed" : "") + "\n");
  }
  return report.failed != 0 ? 1 : 0;
}

}  // namespace

int run_rekey(const RekeyArgs& args) {
  if (args.recipients.empty() && args.recipients_files.empty()) {
    throw usage_error("rekey needs the recipients of the output: -r RECIPIENT or -R FILE (with --add: the ones to add)");
  }
  std::vector<SecretFile> secrets;
  for (const std::string& path : args.identities) secrets.push_back({"-i", path});
  for (const std::string& path : args.recipients_files) secrets.push_back({"-R", path});
  if (!args.aad_file.empty()) secrets.push_back({"--aad-file", args.aad_file});
  const bool several = args.inputs.size() > 1;
  const std::string input = args.inputs.empty() ? "" : args.inputs.front();
  if (several) {
    if (!args.output.empty()) {
      throw usage_error("-o names one output, and several files are each re-keyed in place: drop -o");
    }
    if (!args.force) throw usage_error("re-keying several files replaces each of them: add -f to say so");
    for (const std::string& path : args.inputs) {
      if (path.empty() || path == "-") throw usage_error("'-' (standard input) can't be one of several files");
    }
  }
  refuse_reading_standard_input_twice(secrets, input, "re-key");
  refuse_output_over_secrets(args.output, secrets);
  RekeySpec spec;
  spec.identities = load_identities(args.identities);
  spec.ui = &terminal_ui();
  spec.recipients = load_recipients(args.recipients, args.recipients_files);
  spec.keep_recipients = args.add;
  spec.aad = load_associated_data(args.aad, args.aad_file);
  TransformOptions options;
  options.force = args.force;
  options.armor = args.armor;
  if (several) return rekey_in_place(spec, args, options);
  const RekeyReport report = rekey_sealed(spec, input, args.output, options);
  if (args.verbose) {
    std::ostringstream text;
    text << "paes: rekey: " << report.recipients_before << " recipient" << (report.recipients_before == 1 ? "" : "s")
         << " -> " << report.recipients_after << ", " << report.body_bytes << " body bytes authenticated and copied unchanged"
         << (report.copied_in_kernel ? " in the kernel" : "") << ", " << report.seconds << " s\n";
    say(text.str());
  }
  return 0;
}

}  // namespace paes::cli
