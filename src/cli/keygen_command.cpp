#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <iostream>
#include <span>
#include <string>

#include "cli/commands.hpp"
#include "cli/descriptors.hpp"
#include "cli/key_source.hpp"
#include "cli/passphrase.hpp"
#include "cli/say.hpp"
#include "paes/age_keys.hpp"
#include "paes/endpoint.hpp"
#include "paes/error.hpp"
#include "paes/io.hpp"
#include "paes/secret.hpp"
#include "util/hex.hpp"

namespace paes::cli {

CLI::App* add_keygen_command(CLI::App& app, KeygenArgs& args) {
  CLI::App* cmd = app.add_subcommand("keygen", "Write a new random key, or an X25519 identity, to a file (mode 0600) or a pipe");
  cmd->footer(R"TXT(Examples:
  paes keygen -o backup.key                 # AES-256: 64 hex digits and a newline
  paes keygen --key-bits 128 -o small.key
  paes keygen -o - | pass insert -m backup-key   # to standard output: a pipe or a file, never a terminal
  paes encrypt --key-file backup.key data.tar -o data.tar.paes

  # Public-key recipients, with age's keys: the identity stays where files are
  # decrypted; its recipient (printed, and in the file's comment line) is all
  # encrypting takes. age-keygen's identity files work the same.
  paes keygen --x25519 -o alice.key         # prints age1...
  paes encrypt -r age1... data.tar -o data.tar.paes
  paes decrypt -i alice.key data.tar.paes -o data.tar
  paes keygen -y alice.key                  # prints alice's recipient again (as age-keygen -y)
  (umask 077; paes keygen --x25519 -o - > bob.key)   # "Public key: age1..." on stderr, as age-keygen

The key comes from the OS random generator (through OpenSSL). The file holds
hex text, which every --key-file accepts, and so does openssl: -K "$(cat FILE)".
With --x25519 it is an identity file as age-keygen writes it: comment lines
with the creation time and the public recipient, then the secret
"AGE-SECRET-KEY-1..." line; only the recipient is printed.
-o - writes the key (or identity) on standard output, only when that is not
a terminal, where it would show and stay in the scrollback; the recipient then
goes to stderr. Other streams are refused as outputs: a named pipe, or
/dev/stdout (with -f, the link in /dev would have become the key file).)TXT");
  auto* output = cmd->add_option("-o,--output", args.output,
                                 "Key file to create; '-': standard output, when it is not a terminal")->type_name("FILE");
  auto* key_bits = cmd->add_option("--key-bits", args.key_bits,
                                   "128, 192 or 256 (default 256); the sealed format takes 128 or 256, "
                                   "192 is for the raw modes (--mode)")
                       ->type_name("BITS")
                       ->check(with_choices(key_bits_validator(), {"128", "192", "256"}));
  cmd->add_flag("--x25519", args.x25519,
                "An X25519 identity for public-key recipients (encrypt -r, decrypt -i); prints its recipient")
      ->excludes(key_bits);
  cmd->add_option("-y", args.recipients_of,
                  "Print the recipients of an identity file (age-keygen's or paes'), one a line; "
                  "'-': standard input")
      ->type_name("IDENTITY-FILE")
      ->excludes(output)
      ->excludes(key_bits)
      ->excludes("--x25519");
  cmd->add_flag("-f,--force", args.force, "Overwrite an existing file");
  return cmd;
}

namespace {

// When the identity was made, as age-keygen notes it (RFC 3339, UTC).
std::string created_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// The key file's text into -o: a new file (mode 0600), or standard output
// for '-' (run_keygen made sure it is no terminal).
void write_key_text(const KeygenArgs& args, const SecretBytes& text) {
  if (args.output != "-") {
    OutputFile out(args.output, {.force = args.force, .mode = 0600, .keep_replaced = false});
    out.write_at(0, text.view());
    out.commit();
    return;
  }
  // `> KEY` made a file with the shell's mode, 0644 under most umasks.
  warn_if_exposed(STDOUT_FILENO, "standard output (keygen -o -)");
  // Straight to the descriptor: std::cout would copy the key into a buffer
  // that is never wiped.
  std::span<const std::uint8_t> rest = text.view();
  while (!rest.empty()) {
    const ssize_t n = ::write(STDOUT_FILENO, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw system_error("writing the key to standard output");
    rest = rest.subspan(static_cast<std::size_t>(n));
  }
}

int run_x25519_keygen(const KeygenArgs& args) {
  const SecretBytes identity = x25519_generate_identity();
  write_key_text(args, age_identity_file(identity, created_now()));
  const std::string recipient = format_age_recipient(x25519_public_key(identity));
  // With the identity on stdout, stdout holds only that, as age-keygen's.
  if (args.output == "-") {
    say("Public key: " + recipient + '\n');
    return 0;
  }
  std::cout << recipient << '\n';
  try {
    flush_standard_output();
  } catch (const Error& e) {
    // The recipient is lost, but not the identity it comes from.
    throw Error(std::string(e.what()) + "; the identity was written to " + args.output + ", and paes keygen -y " +
                args.output + " prints its recipient");
  }
  return 0;
}

// age-keygen -y: the recipient of each identity in the file.
int print_recipients(const std::string& path) {
  const std::string name = secret_file_name("identity file", "-y", path);
  const SecretBytes text =
      read_secret_file(path, kMaxIdentityFileLen, name, "an identity is not typed: give a file or a pipe");
  refuse_raw_key_as_identity(text, name);
  for (const Identity& identity : parse_identity_file(text, name, std::nullopt)) {
    if (identity.type() == KeyType::plugin) {
      throw usage_error(name + " holds an age plugin identity: its recipient comes from its plugin (age-plugin-" +
                        identity.plugin_name() + "), not from the identity");
    }
    std::cout << format_recipient(identity.recipient()) << '\n';
  }
  return 0;
}

}  // namespace

int run_keygen(const KeygenArgs& args) {
  if (!args.recipients_of.empty()) return print_recipients(args.recipients_of);
  if (args.output.empty()) throw usage_error("keygen writes a key file: name it, -o FILE (or print an identity's "
                                             "recipients with -y FILE)");
  // /dev/stdout, a link, would have become the key file with -f; '-' says
  // what is meant. A named pipe is refused too: -o - into a pipe is the one
  // stream a key goes to, and it says so on the command line.
  if (args.output != "-" && names_output_stream(args.output)) {
    throw usage_error("keygen writes a key file (mode 0600), and " + args.output +
                      " is a stream, not one: name the file, -o FILE (or -o - for standard output)");
  }
  // On a terminal the key would show, and stay in the scrollback.
  if (args.output == "-" && ::isatty(STDOUT_FILENO) != 0) {
    throw usage_error("keygen -o - writes the key on standard output, which is a terminal: redirect it to a "
                      "file or a pipe, or name the file, -o FILE");
  }
  if (args.x25519) return run_x25519_keygen(args);
  SecretBytes key(args.key_bits / 8);
  random_bytes({key.data(), key.size()});
  // The hex text is the key too, so it is built in wiped memory at its final
  // size: a std::string that grows (by the newline) frees its first buffer
  // without wiping it, and a wipe afterwards only reaches the last one.
  SecretBytes text(2 * key.size() + 1);
  encode_hex_into(key.view(), {text.data(), 2 * key.size()});
  text.data()[2 * key.size()] = '\n';
  write_key_text(args, text);
  return 0;
}

}  // namespace paes::cli
