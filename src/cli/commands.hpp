// The subcommands of the paes tool. Each add_* registers its options on the
// CLI11 app; each run_* does the work and returns the exit status, throwing
// paes::Error for failures (main() maps them to exit 1 or 2).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/key_source.hpp"
#include "paes/mode.hpp"
#include "paes/sealed.hpp"

namespace paes::cli {

struct TransformArgs {
  std::string mode;  // empty: the sealed format
  std::string format = "paes";
  KeySources keys;
  // Sealed, paes format: encrypt to X25519 recipients (-r strings, -R files),
  // decrypt with identity files (-i).
  std::vector<std::string> recipients;
  std::vector<std::string> recipients_files;
  std::vector<std::string> identities;
  std::string iv_hex;
  bool no_pad = false;
  bool pbkdf2 = false;
  std::uint32_t iterations = 10000;
  unsigned key_bits = 0;  // 0: 256 for passphrases
  std::string aad;
  std::string aad_file;  // --aad-file: the associated data is this file's bytes
  bool allow_uncommitted = false;
  std::string md = "sha256";  // --pbkdf2's digest (openssl enc -md)
  bool no_salt = false;       // --nosalt
  std::string salt_hex;       // --salt
  bool print_key = false;     // -p, openssl's, refused
  std::uint64_t segment_len = 1u << 20;
  unsigned scrypt_log2_n = 18;
  std::string engine = "threads";
  std::string backend = "auto";  // the CPU's AES library (paes/backend.hpp)
  unsigned threads = 0;
  std::optional<unsigned> device;
  std::uint64_t chunk_len = 0;  // 0: the mode's default
  bool force = false;
  bool armor = false;  // -a: text (paes/transform.hpp, TransformOptions::armor)
  bool json = false;
  bool verbose = false;
  bool progress = false;
  bool no_progress = false;
  std::string input;    // the one input (the first of `inputs`), when not a set
  std::vector<std::string> inputs;  // as named
  std::string output;
  // A data set (cli/transform_command.cpp, names_a_set): each file's output
  // beside it, or under output_dir.
  bool recursive = false;
  std::string files_from;   // one path a line; '-': stdin
  std::string files0_from;  // NUL-separated
  std::string output_dir;
  std::string suffix;       // empty: the format's (.paes, .age, .tink, .enc)
  bool remove_inputs = false;  // --rm
  // decrypt --range [-]OFFSET[:LENGTH] of a sealed file
  std::optional<SealedRange> range;
};
CLI::App* add_transform_command(CLI::App& app, Direction direction, TransformArgs& args);
int run_transform(Direction direction, const TransformArgs& args, const CLI::App& command);

struct BenchArgs {
  std::vector<std::uint64_t> sizes;
  std::vector<std::string> modes;
  std::vector<unsigned> key_bits{128, 192, 256};
  std::vector<std::string> directions{"encrypt", "decrypt"};
  unsigned threads = 0;
  std::vector<unsigned> thread_counts;
  std::vector<std::string> backends{"auto"};  // CPU AES libraries to compare
  std::string engine;  // a GPU backend: its figures instead
  std::optional<unsigned> device;
  // With engine: kernel-only figures for each of these launch geometries
  // instead (threads per block or work-group size, x blocks per thread).
  std::vector<unsigned> group_sizes;
  std::vector<unsigned> blocks_per_item;
  unsigned repeat = 5;
  std::uint64_t chunk_len = 0;
  bool json = false;
};
CLI::App* add_bench_command(CLI::App& app, BenchArgs& args);
int run_bench(const BenchArgs& args);

struct InfoArgs {
  bool json = false;
};
CLI::App* add_info_command(CLI::App& app, InfoArgs& args);

struct KeygenArgs {
  std::string output;
  unsigned key_bits = 256;
  bool x25519 = false;  // an X25519 identity instead of an AES key
  std::string recipients_of;  // -y: print this identity file's recipients instead
  bool force = false;
};
CLI::App* add_keygen_command(CLI::App& app, KeygenArgs& args);
int run_keygen(const KeygenArgs& args);
int run_info(const InfoArgs& args);

struct RekeyArgs {
  std::vector<std::string> inputs;
  std::string output;
  std::vector<std::string> identities;
  std::vector<std::string> recipients;
  std::vector<std::string> recipients_files;
  std::string aad;
  std::string aad_file;
  bool add = false;
  bool armor = false;
  bool force = false;
  bool verbose = false;
};
CLI::App* add_rekey_command(CLI::App& app, RekeyArgs& args);
int run_rekey(const RekeyArgs& args);

struct DocsArgs {
  std::string shell;  // completion: bash or zsh
};
// `paes completion SHELL` (a completion script) and the hidden `paes man` (the
// man page, roff), both written from the app's own options (cli/docs_command.cpp).
CLI::App* add_completion_command(CLI::App& app, DocsArgs& args);
CLI::App* add_man_command(CLI::App& app);
int run_completion(const DocsArgs& args, CLI::App& app);
int run_man(CLI::App& app);

struct InspectArgs {
  std::vector<std::string> inputs;
  bool json = false;
};
CLI::App* add_inspect_command(CLI::App& app, InspectArgs& args);
int run_inspect(const InspectArgs& args);

// --backend (and its PAES_BACKEND default), shared by encrypt, decrypt and bench.
CLI::Option* add_backend_option(CLI::App& command, std::string& backend);
// Whether `name` is a GPU backend's (--engine NAME is short for --engine
// threads --backend NAME).
bool names_gpu_backend(std::string_view name);
// --engine auto: the threads engine, its jobs under auto with its GPU policy
// (BackendChoice::gpu_where_faster).
inline constexpr std::string_view kAutoEngine = "auto";
// The words --engine takes for engines: the build's, with auto after
// threads, space-separated, in the order `paes info` lists them.
std::string engine_words();

// `check`, which accepts only the words in `choices`, carrying them for the
// man page and the completions (option_choices): CLI11 keeps no list of what
// an option accepts once --help's "{a,b}" is blanked.
CLI::Validator with_choices(CLI::Validator check, const std::vector<std::string>& choices);
// The words with_choices gave the option's check; empty for a free value.
std::vector<std::string> option_choices(CLI::Option& option);

// Validators shared by the subcommands.
CLI::Validator size_validator();        // "64K", "4M", "1G"
CLI::Validator chunk_size_validator();  // a size from 16 bytes to 1G
CLI::Validator segment_size_validator();  // a size up to 64M
CLI::Validator whole_number_validator(std::uint64_t low, std::uint64_t high);
CLI::Validator key_bits_validator();  // 128, 192 or 256
std::uint64_t size_value(const std::string& text);
// --range's "[-]OFFSET[:LENGTH]", each a size (4096, 64K, 1G), the OFFSET after
// a '-' counted back from the end; nullopt when malformed.
std::optional<SealedRange> parse_range(const std::string& text);

}  // namespace paes::cli
