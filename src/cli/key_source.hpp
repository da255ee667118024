// Where keys and IVs come from on the command line. Keys are read from a file
// (hex text, or raw bytes that are not text), the environment (hex) or, with a
// warning, from --key-hex; they live only in SecretBytes, and no message ever
// contains key material.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/passphrase.hpp"
#include "paes/mode.hpp"
#include "paes/sealed.hpp"

namespace paes::cli {

// Where the command line says the secret comes from: at most one is set.
struct KeySources {
  std::string key_file;
  std::string key_env;
  std::string key_hex;
  std::string passphrase_file;
  std::string passphrase_env;

  bool has_key() const { return !key_file.empty() || !key_env.empty() || !key_hex.empty(); }
};

// The raw key from --key-file ("-": standard input), --key-env (hex) or
// --key-hex (with a warning that command lines are visible). Throws Error
// when a file or variable holds no valid key, and a usage Error for a
// malformed --key-hex or a key file that is a terminal.
SecretBytes load_key(const KeySources& sources);

// --aad TEXT and --aad-file PATH (one or the other), which sealing, opening
// and re-keying take alike.
void add_associated_data_options(CLI::App& cmd, std::string& aad, std::string& aad_file);
// Their bytes: the text, or the file's bytes ("-": standard input) up to
// 16 MiB. Throws Error for an unreadable or larger file.
std::vector<std::uint8_t> load_associated_data(const std::string& aad, const std::string& aad_file);

// The passphrase from --passphrase-file (read by `file_rule`), --passphrase-env,
// or else a no-echo prompt on the terminal, asked twice when `confirm`.
SecretBytes load_passphrase(const KeySources& sources, bool confirm, PassphraseFileRule file_rule);

// Decodes a key file's content: hex text (32, 48 or 64 hex digits, surrounding
// whitespace ignored) or else raw bytes (16, 24 or 32 of them) that are not
// text: neither all printable ASCII and whitespace, nor UTF-8 text, nor
// either after a UTF-8 byte-order mark. Throws Error otherwise, naming what
// the file holds (empty, text, UTF-8 text, a byte-order mark).
SecretBytes decode_key_file(const SecretBytes& content, const std::string& path);

// Recipients from -r strings and -R files ("-": standard input), as age
// takes them (age1..., age1NAME1..., ssh-ed25519/ssh-rsa lines:
// parse_recipients_file). Throws a usage Error
// naming the argument or the file and line (never quoting them), and Error
// for an unreadable file.
std::vector<Recipient> load_recipients(const std::vector<std::string>& recipients,
                                       const std::vector<std::string>& files);

// The identities of -i files ("-": standard input): X25519 and plugin
// identities as age-keygen, plugins and 'paes keygen --x25519' write them,
// or an ssh private key file (with NAME.pub beside it, where there is one). Throws Error naming the
// file, never quoting its content, and a usage Error for a terminal.
std::vector<Identity> load_identities(const std::vector<std::string>& paths);

// Refuses, as a usage error (a file in the wrong role, as an identity given
// as a key file is), an identity file `name` that holds what a key file does.
void refuse_raw_key_as_identity(const SecretBytes& content, const std::string& name);

// The IV for `mode` from --iv: required (32 hex digits) unless the mode is ECB,
// which refuses one. Throws a usage Error.
Block parse_iv(Mode mode, const std::string& iv_hex);

}  // namespace paes::cli
