// The subcommands of the paes tool. Each add_* registers its options on the
// CLI11 app; each run_* does the work and returns the exit status, throwing
// paes::Error for failures (main() maps them to exit 1 or 2).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "paes/mode.hpp"

namespace paes::cli {

struct TransformArgs {
  std::string mode;
  std::string key_hex;
  std::string key_file;
  std::string iv_hex;
  bool no_pad = false;
  std::string engine = "threads";
  unsigned threads = 0;
  std::uint64_t chunk_len = 0;  // 0: the mode's default
  bool force = false;
  bool json = false;
  std::string input;
  std::string output;
};
CLI::App* add_transform_command(CLI::App& app, Direction direction, TransformArgs& args);
int run_transform(Direction direction, const TransformArgs& args);

struct BenchArgs {
  std::vector<std::uint64_t> sizes;
  std::vector<std::string> modes;
  std::vector<unsigned> key_bits{128, 192, 256};
  std::vector<std::string> directions{"encrypt", "decrypt"};
  unsigned threads = 0;
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
int run_info(const InfoArgs& args);

// Validators shared by the subcommands.
CLI::Validator size_validator();        // "64K", "4M", "1G"
CLI::Validator chunk_size_validator();  // a size from 16 bytes to 1G
std::uint64_t size_value(const std::string& text);

}  // namespace paes::cli
