// paes inspect: what a file is, without its key (inspect_sealed_file,
// paes/inspect.hpp), one fact a line or as JSON (docs/FORMAT.md section 9).
#include <iostream>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/say.hpp"
#include "paes/error.hpp"
#include "paes/inspect.hpp"
#include "util/printable.hpp"

namespace paes::cli {

CLI::App* add_inspect_command(CLI::App& app, InspectArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "inspect", "Say what a file is without its key: format, key source, recipients, sizes");
  cmd->footer(R"TXT(Examples:
  paes inspect data.tar.paes
  paes inspect --json data.tar.paes | jq .sizes.min_payload
  paes inspect backups/*.paes                        # each file under a "file:" line
  paes inspect --json backups/*.paes | jq -c '{file, key_source}'   # one object a line

A paes file's plaintext size comes from its length and segment size, as if it
verifies (only the key checks that). age files, openssl 'Salted__' files and
OpenPGP messages are named; a bare Tink stream, which has no magic, is named
as likely. Exit status 0 for a file named whole; 1 for an unknown format and
for a file no sealing makes as it is (truncated, a refused preamble), with
the facts still printed. Of several files, each is inspected whatever the
others are, and the status is 1 if any of them would give 1.)TXT");
  cmd->add_option("input", args.inputs, "Files to inspect ('-' or none: standard input)")->type_name("INPUT...");
  cmd->add_flag("--json", args.json,
                "Print one JSON object (age-inspect's fields, and paes' own); of several files, one a line, each "
                "with its \"file\"");
  return cmd;
}

namespace {

nlohmann::json optional_size(const std::optional<std::uint64_t>& size) {
  return size ? nlohmann::json(*size) : nlohmann::json(nullptr);
}

// age-inspect's "version": the format's own name for itself.
nlohmann::json version_name(const SealedFileInfo& info) {
  if (info.format == InspectedFormat::paes && info.version != 0) return "paes/v" + std::to_string(info.version);
  if (info.format == InspectedFormat::age) return "age-encryption.org/v1";
  return nullptr;
}

// age-inspect's "postquantum": X25519 recipients are not; a symmetric key
// (AES-128 is NIST's post-quantum category 1) is; unknown stanza types and
// foreign formats are "unknown", as age says for types it doesn't know.
std::string postquantum(const SealedFileInfo& info) {
  if (info.key_source == InspectedKeySource::raw_key || info.key_source == InspectedKeySource::passphrase) return "yes";
  if (info.stanza_types.empty()) return "unknown";
  std::string verdict = "unknown";
  for (const std::string& type : info.stanza_types) {
    if (type == "X25519" || type == "ssh-rsa" || type == "ssh-ed25519" || type == "p256tag" || type == "piv-p256") {
      return "no";
    }
    if (type == "mlkem768x25519" || type == "scrypt" || type == "mlkem768p256tag") verdict = "yes";
  }
  return verdict;
}

// Where the header of stanzas was read: a version-3 file's, an age file's
// (armored ones decoded first).
bool lists_recipients(const SealedFileInfo& info) {
  return info.key_source == InspectedKeySource::recipients ||
         (info.format == InspectedFormat::age && info.header_size.has_value());
}

// age-inspect's sizes.armor: the bytes the armor adds (0 for a binary file;
// unknown for armor read from a stream).
nlohmann::json armor_size(const SealedFileInfo& info) {
  if (!info.armor) return 0;
  if (!info.armored_size || !info.file_size) return nullptr;
  return *info.armored_size - *info.file_size;
}

nlohmann::json to_json(const SealedFileInfo& info) {
  const bool sized = info.header_size && info.plaintext_size;
  return {
      {"format", inspected_format_name(info.format)},
      {"likely", info.likely},
      {"version", version_name(info)},
      {"postquantum", postquantum(info)},
      {"armor", info.armor},
      {"stanza_types", info.stanza_types},
      {"sizes",
       {{"header", optional_size(info.header_size)},
        {"armor", armor_size(info)},
        {"overhead", optional_size(info.overhead)},
        {"min_payload", optional_size(info.plaintext_size)},
        {"max_payload", optional_size(info.plaintext_size)},
        {"min_padding", sized ? nlohmann::json(0) : nlohmann::json(nullptr)},
        {"max_padding", sized ? nlohmann::json(0) : nlohmann::json(nullptr)}}},
      {"format_version", info.version == 0 ? nlohmann::json(nullptr) : nlohmann::json(info.version)},
      {"key_source", info.key_source == InspectedKeySource::none ? nlohmann::json(nullptr)
                                                                 : nlohmann::json(inspected_key_source_name(info.key_source))},
      {"scrypt_log2_n", info.scrypt_log2_n == 0 ? nlohmann::json(nullptr) : nlohmann::json(info.scrypt_log2_n)},
      {"committing",
       info.format == InspectedFormat::paes ? nlohmann::json(info.key_committing) : nlohmann::json(nullptr)},
      {"recipients", lists_recipients(info) ? nlohmann::json(info.stanza_types.size()) : nlohmann::json(nullptr)},
      {"key_bits", info.key_bits == 0 ? nlohmann::json(nullptr) : nlohmann::json(info.key_bits)},
      {"segment_size", info.segment_size == 0 ? nlohmann::json(nullptr) : nlohmann::json(info.segment_size)},
      {"file_size", optional_size(info.file_size)},
      {"truncated", info.truncated},
      {"problem", info.problem.empty() ? nlohmann::json(nullptr) : nlohmann::json(info.problem)},
  };
}

void print_text(const SealedFileInfo& info) {
  std::cout << "format: " << inspected_format_name(info.format) << (info.likely ? " (likely)" : "") << '\n';
  if (info.version != 0) std::cout << "version: " << info.version << '\n';
  if (info.armor) std::cout << "armor: yes\n";
  switch (info.key_source) {
    case InspectedKeySource::raw_key: std::cout << "key source: raw key\n"; break;
    case InspectedKeySource::passphrase:
      std::cout << "key source: passphrase (scrypt log2 N " << info.scrypt_log2_n << ")\n";
      break;
    case InspectedKeySource::recipients: std::cout << "key source: recipients\n"; break;
    case InspectedKeySource::none: break;
  }
  if (info.format == InspectedFormat::paes && info.version != 0 && info.problem.empty()) {
    std::cout << (info.key_committing ? "committing: yes (the header's MAC binds the key and associated data)\n"
                                      : "committing: no (version 1: opens only with --allow-uncommitted)\n");
  }
  if (lists_recipients(info)) {
    std::cout << "recipients: " << info.stanza_types.size() << '\n';
    for (const std::string& type : info.stanza_types) std::cout << "stanza: " << type << '\n';
  }
  if (info.key_bits != 0) std::cout << "key size: AES-" << info.key_bits << '\n';
  if (info.segment_size != 0) std::cout << "segment size: " << info.segment_size << '\n';
  if (info.file_size) std::cout << "file size: " << *info.file_size << '\n';
  if (info.header_size) std::cout << "header: " << *info.header_size << '\n';
  if (info.overhead) std::cout << "overhead: " << *info.overhead << '\n';
  if (info.plaintext_size) std::cout << "plaintext size: " << *info.plaintext_size << '\n';
  if (info.truncated) std::cout << "truncated: yes\n";
  if (!info.problem.empty()) std::cout << "problem: " << info.problem << '\n';
}

}  // namespace

int run_inspect(const InspectArgs& args) {
  if (args.inputs.size() <= 1) {
    const SealedFileInfo info = inspect_sealed_file(args.inputs.empty() ? "" : args.inputs.front());
    if (args.json) {
      // A problem quotes the file's name, which need not be UTF-8.
      std::cout << to_json(info).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    } else {
      print_text(info);
    }
    return info.format == InspectedFormat::unknown || !info.problem.empty() ? 1 : 0;
  }
  // Several: each one's facts, or its one line of failure, and on to the next.
  int status = 0;
  bool first = true;
  for (const std::string& input : args.inputs) {
    if (!std::exchange(first, false) && !args.json) std::cout << '\n';
    try {
      const SealedFileInfo info = inspect_sealed_file(input);
      if (info.format == InspectedFormat::unknown || !info.problem.empty()) status = 1;
      if (args.json) {
        nlohmann::json record = {{"file", input}};
        record.update(to_json(info));
        std::cout << record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
      } else {
        std::cout << "file: " << printable(input) << '\n';
        print_text(info);
      }
    } catch (const Error& e) {
      status = 1;
      std::cout.flush();
      say("paes: " + printable(e.what()) + in_flags(e.remedy()) + '\n');
      if (args.json) {
        std::cout << nlohmann::json{{"file", input}, {"error", e.what()}}.dump(-1, ' ', false,
                                                                               nlohmann::json::error_handler_t::replace)
                  << '\n';
      }
    }
  }
  return status;
}

}  // namespace paes::cli
