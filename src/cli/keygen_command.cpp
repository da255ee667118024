#include "cli/commands.hpp"
#include "paes/io.hpp"
#include "paes/secret.hpp"
#include "util/hex.hpp"

namespace paes::cli {

CLI::App* add_keygen_command(CLI::App& app, KeygenArgs& args) {
  CLI::App* cmd = app.add_subcommand("keygen", "Write a new random key to a file (mode 0600)");
  cmd->footer(R"TXT(Examples:
  paes keygen -o backup.key                 # AES-256: 64 hex digits and a newline
  paes keygen --key-bits 128 -o small.key
  paes encrypt --key-file backup.key data.tar -o data.tar.paes

The key comes from the OS random generator (through OpenSSL). The file holds
hex text, which every --key-file accepts, and so does openssl: -K "$(cat FILE)".)TXT");
  cmd->add_option("-o,--output", args.output, "Key file to create")->type_name("FILE")->required();
  cmd->add_option("--key-bits", args.key_bits, "128, 192 or 256 (default 256)")
      ->check(CLI::IsMember({128u, 192u, 256u}));
  cmd->add_flag("-f,--force", args.force, "Overwrite an existing file");
  return cmd;
}

int run_keygen(const KeygenArgs& args) {
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
