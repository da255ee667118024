#include <cstring>
#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "format/recipients.hpp"
#include "paes/endpoint.hpp"
#include "paes/error.hpp"
#include "paes/io.hpp"
#include "paes/secret.hpp"
#include "util/hex.hpp"

namespace paes::cli {

CLI::App* add_keygen_command(CLI::App& app, KeygenArgs& args) {
  CLI::App* cmd = app.add_subcommand("keygen", "Write a new random key, or an X25519 identity, to a file (mode 0600)");
  cmd->footer(R"TXT(Examples:
  paes keygen -o backup.key                 # AES-256: 64 hex digits and a newline
  paes keygen --key-bits 128 -o small.key
  paes encrypt --key-file backup.key data.tar -o data.tar.paes

  # Public-key recipients: the identity stays where files are decrypted; its
  # recipient (printed, and in the file's comment line) is all encrypting takes.
  paes keygen --x25519 -o alice.key         # prints paes-x25519:<64 hex>
  paes encrypt -r paes-x25519:<64 hex> data.tar -o data.tar.paes
  paes decrypt -i alice.key data.tar.paes -o data.tar

The key comes from the OS random generator (through OpenSSL). The file holds
hex text, which every --key-file accepts, and so does openssl: -K "$(cat FILE)".
With --x25519 it holds a comment line with the public recipient and the secret
line "paes-x25519-secret:<64 hex>"; only the recipient is printed.)TXT");
  cmd->add_option("-o,--output", args.output, "Key file to create")->type_name("FILE")->required();
  auto* key_bits = cmd->add_option("--key-bits", args.key_bits,
                                   "128, 192 or 256 (default 256); the sealed format takes 128 or 256, "
                                   "192 is for the raw modes (--mode)")
                       ->type_name("BITS")
                       ->check(CLI::IsMember({128u, 192u, 256u}).description(""));
  cmd->add_flag("--x25519", args.x25519,
                "An X25519 identity for public-key recipients (encrypt -r, decrypt -i); prints its recipient")
      ->excludes(key_bits);
  cmd->add_flag("-f,--force", args.force, "Overwrite an existing file");
  return cmd;
}

namespace {

// The identity file: "# public key: <recipient>\n" then the secret line,
// built in wiped memory at its final size like the hex key below.
int run_x25519_keygen(const KeygenArgs& args) {
  const SecretBytes identity = x25519_generate_identity();
  const std::string recipient = format_recipient(x25519_public_key(identity));
  const std::string comment = "# public key: " + recipient + "\n";
  const std::size_t hex_len = 2 * identity.size();
  SecretBytes text(comment.size() + kIdentityPrefix.size() + hex_len + 1);
  std::uint8_t* p = text.data();
  std::memcpy(p, comment.data(), comment.size());
  p += comment.size();
  std::memcpy(p, kIdentityPrefix.data(), kIdentityPrefix.size());
  p += kIdentityPrefix.size();
  encode_hex_into(identity.view(), {p, hex_len});
  p[hex_len] = '\n';
  OutputFile out(args.output, {.force = args.force, .mode = 0600, .keep_replaced = false});
  out.write_at(0, text.view());
  out.commit();
  std::cout << recipient << '\n';
  return 0;
}

}  // namespace

int run_keygen(const KeygenArgs& args) {
  // Elsewhere '-', /dev/stdout or a pipe mean a stream, but a key belongs in
  // a file of its own (and with -f, /dev/stdout, a link, would have become
  // that file).
  if (names_stdio(args.output) || names_output_stream(args.output)) {
    throw usage_error("keygen writes a key file (mode 0600), and " + args.output +
                      " is a stream, not one: name the file, -o FILE");
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
  OutputFile out(args.output, {.force = args.force, .mode = 0600, .keep_replaced = false});
  out.write_at(0, text.view());
  out.commit();
  return 0;
}

}  // namespace paes::cli
