#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/key_source.hpp"
#include "paes/engine.hpp"
#include "paes/error.hpp"
#include "paes/transform.hpp"

namespace paes::cli {
namespace {

constexpr const char* kEncryptFooter = R"TXT(Examples:
  # AES-256-CTR with a key file (32 raw bytes or 64 hex digits):
  paes encrypt --mode ctr --key-file aes256.key --iv 00112233445566778899aabbccddeeff big.bin -o big.ctr
  # AES-128-CBC with PKCS#7 padding, as 'openssl enc -aes-128-cbc -K .. -iv ..':
  paes encrypt --mode cbc --key-file aes128.key --iv "$IV" notes.txt -o notes.cbc
  # Machine-readable timing:
  paes encrypt --mode ecb --key-file aes.key --no-pad --json blocks.bin -o blocks.ecb

The key size (AES-128/192/256) follows the key length (16/24/32 bytes).
ECB, CTR and the decryption of CBC and CFB run on all threads. CBC and CFB
encryption and OFB are sequential by nature: they run one cipher thread with
reading and writing overlapped, and give the standard ciphertext.
The output appears under its name only when complete; an existing output is
replaced only with -f.)TXT";

constexpr const char* kDecryptFooter = R"TXT(Examples:
  paes decrypt --mode ctr --key-file aes256.key --iv 00112233445566778899aabbccddeeff big.ctr -o big.bin
  paes decrypt --mode cbc --key-file aes128.key --iv "$IV" notes.cbc -o notes.txt
  # Decrypt what openssl wrote:
  openssl enc -aes-256-cfb -K "$(xxd -p -c 64 aes256.key)" -iv "$IV" -in a -out a.cfb
  paes decrypt --mode cfb --key-file aes256.key --iv "$IV" a.cfb -o a

Raw modes carry no integrity check: a wrong key or damaged data gives garbage,
except that ECB/CBC padding errors are reported as "bad decrypt".)TXT";

CLI::Validator mode_validator() {
  return CLI::Validator(
      [](std::string& name) -> std::string {
        if (parse_mode(name)) return {};
        return "unknown mode '" + name + "' (choose ecb, cbc, cfb, cfb8, cfb1, ofb or ctr)";
      },
      "MODE");
}

CLI::Validator engine_validator() {
  return CLI::Validator(
      [](std::string& name) -> std::string {
        if (parse_engine(name)) return {};
        return "unknown engine '" + name + "' (this build has: " +
               std::string(compiled_engines()) + ")";
      },
      "ENGINE");
}

}  // namespace

CLI::App* add_transform_command(CLI::App& app, Direction direction, TransformArgs& args) {
  const bool enc = direction == Direction::encrypt;
  CLI::App* cmd = app.add_subcommand(std::string(direction_name(direction)),
                                     enc ? "Encrypt a file with a raw AES mode"
                                         : "Decrypt a file with a raw AES mode");
  cmd->footer(enc ? kEncryptFooter : kDecryptFooter);
  cmd->add_option("--mode,-m", args.mode, "ecb, cbc, cfb (128-bit), cfb8, cfb1, ofb or ctr")
      ->type_name("MODE")
      ->required()
      ->check(mode_validator());
  auto* key_group = cmd->add_option_group("key", "Where the key comes from (one of)");
  auto* key_file = key_group->add_option("--key-file,-k", args.key_file,
                                         "File with the key: 16/24/32 raw bytes or hex text")
                        ->type_name("PATH");
  auto* key_hex = key_group->add_option("--key-hex", args.key_hex,
                                        "Key as hex (visible to other users: prefer --key-file)")
                       ->type_name("HEX");
  key_file->excludes(key_hex);
  key_group->require_option(1);
  cmd->add_option("--iv", args.iv_hex, "IV as 32 hex digits (every mode but ECB)")->type_name("HEX");
  cmd->add_flag("--no-pad", args.no_pad,
                "ECB/CBC without PKCS#7 padding (input must be whole 16-byte blocks)");
  cmd->add_option("--engine", args.engine, "serial or threads")
      ->type_name("ENGINE")
      ->check(engine_validator())
      ->capture_default_str();
  cmd->add_option("--threads,-t", args.threads, "Worker threads (default: online CPUs)")
      ->type_name("N")
      ->check(CLI::Range(1u, 4096u));
  cmd->add_option_function<std::string>(
         "--chunk-size", [&args](const std::string& text) { args.chunk_len = size_value(text); },
         "Bytes a worker takes at a time, a multiple of 16 (default 1M; cfb8 64K, cfb1 16K)")
      ->type_name("SIZE")
      ->check(chunk_size_validator());
  cmd->add_flag("-f,--force", args.force, "Overwrite an existing output");
  cmd->add_flag("--json", args.json, "Print a JSON summary on stdout");
  cmd->add_option("input", args.input, "Input file")->type_name("INPUT")->required();
  cmd->add_option("-o,--output", args.output, "Output file (written only when complete)")
      ->type_name("OUTPUT")
      ->required();
  return cmd;
}

int run_transform(Direction direction, const TransformArgs& args) {
  CipherSpec spec;
  spec.mode = *parse_mode(args.mode);
  spec.direction = direction;
  spec.iv = parse_iv(spec.mode, args.iv_hex);
  spec.padding = !args.no_pad;
  spec.key = load_key(args.key_hex, args.key_file);

  TransformOptions options;
  options.engine = *parse_engine(args.engine);
  options.threads = args.threads;
  options.chunk_len = args.chunk_len;  // 0: the mode's default
  options.force = args.force;

  if (options.engine == EngineKind::threads && args.threads > 1 &&
      !is_parallel(spec.mode, direction)) {
    std::cerr << "paes: note: " << mode_name(spec.mode)
              << (direction == Direction::encrypt ? " encryption" : " decryption")
              << " is sequential by nature; it runs on one cipher thread with reads and writes "
                 "overlapped\n";
  }

  const TransformReport report = transform_file(spec, args.input, args.output, options);
  if (args.json) {
    const nlohmann::json summary = {
        {"mode", mode_name(spec.mode)},
        {"key_bits", spec.key_bits()},
        {"direction", direction_name(direction)},
        {"engine", engine_name(options.engine)},
        {"threads", report.workers},
        {"parallel", report.parallel},
        {"chunk_size", report.chunk_len},
        {"bytes_in", report.bytes_in},
        {"bytes_out", report.bytes_out},
        {"seconds", report.seconds},
        {"gbps", report.seconds > 0 ? static_cast<double>(report.bytes_in) / report.seconds / 1e9 : 0.0},
    };
    std::cout << summary.dump() << '\n';
  }
  return 0;
}

}  // namespace paes::cli
