// paes bench: in-memory throughput, no I/O. For each mode, direction and key
// size it times OpenSSL's own one-shot transform (one EVP context over the
// whole buffer, what `openssl enc` does minus its I/O), the serial engine and
// the threads engine at 1..N threads, all in this one process, and prints
// ratios against those baselines. Each figure is the median of --repeat runs,
// taken round-robin after a warm-up (see time_round_robin).
#include <openssl/rand.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cipher/oneshot.hpp"
#include "cli/commands.hpp"
#include "paes/error.hpp"
#include "paes/transform.hpp"
#include "util/size.hpp"

namespace paes::cli {
namespace {

struct Candidate {
  std::string engine;
  unsigned threads = 1;
  std::function<void()> run;
};

struct Measurement {
  std::string engine;
  unsigned threads = 1;
  double seconds = 0;  // median
  double min_seconds = 0;
  double max_seconds = 0;
};

// Times every candidate `repeat` times, round-robin (one run of each, then the
// next round) after one warm-up run each, so that a slow drift of the machine
// (other tenants, frequency) weighs on all candidates alike and their ratios
// stay fair. Reports the median, min and max of each.
std::vector<Measurement> time_round_robin(const std::vector<Candidate>& candidates,
                                          unsigned repeat) {
  for (const auto& candidate : candidates) candidate.run();
  std::vector<std::vector<double>> seconds(candidates.size());
  for (unsigned round = 0; round < repeat; ++round) {
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const auto start = std::chrono::steady_clock::now();
      candidates[i].run();
      seconds[i].push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }
  std::vector<Measurement> results;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    auto& s = seconds[i];
    std::sort(s.begin(), s.end());
    results.push_back({candidates[i].engine, candidates[i].threads, s[s.size() / 2], s.front(), s.back()});
  }
  return results;
}

// The bit- and byte-wise CFB modes run one AES per bit or byte; a smaller
// buffer keeps their rows from dominating the run time.
std::uint64_t size_for(Mode mode, std::uint64_t size) {
  const std::uint64_t scaled = mode == Mode::cfb1 ? size / 64 : mode == Mode::cfb8 ? size / 8 : size;
  return std::max<std::uint64_t>(scaled / kBlockLen * kBlockLen, std::min<std::uint64_t>(size, 64 * 1024));
}

double gbps(std::uint64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0;
}

}  // namespace

CLI::App* add_bench_command(CLI::App& app, BenchArgs& args) {
  CLI::App* cmd = app.add_subcommand("bench", "Measure in-memory throughput against OpenSSL");
  cmd->footer(R"(Examples:
  paes bench                                   # every mode, direction and key size
  paes bench --modes ctr,cbc --key-bits 256 --size 1G --threads 8
  paes bench --size 16K,64K,256K,1M --modes ctr --threads 2 --chunk-size 16K --json

Columns: OpenSSL one-shot GB/s; the serial engine's GB/s and its ratio to
OpenSSL; the threads engine's GB/s at each thread count and its speed-up over
serial. GB/s is 10^9 bytes per second of input. CFB8 and CFB1 use 1/8 and
1/64 of --size (at least 64K) since they run one AES per byte or bit.)");
  cmd->add_option_function<std::vector<std::string>>(
         "--size", [&args](const std::vector<std::string>& texts) {
           args.sizes.clear();
           for (const auto& text : texts) args.sizes.push_back(size_value(text));
         },
         "Buffer sizes, comma-separated (default 64M)")
      ->delimiter(',')
      ->check(size_validator());
  cmd->add_option("--modes", args.modes, "Modes, comma-separated (default: all)")->delimiter(',');
  cmd->add_option("--key-bits", args.key_bits, "Key sizes (default 128,192,256)")
      ->delimiter(',')
      ->check(CLI::IsMember({128u, 192u, 256u}));
  cmd->add_option("--directions", args.directions, "encrypt, decrypt or both (default both)")
      ->delimiter(',')
      ->check(CLI::IsMember({"encrypt", "decrypt"}));
  cmd->add_option("--threads,-t", args.threads, "Sweep the threads engine from 1 to N (default: online CPUs)")
      ->check(CLI::Range(1u, 4096u));
  cmd->add_option("--repeat,-r", args.repeat, "Timed runs per figure; the median is reported")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  cmd->add_option_function<std::string>(
         "--chunk-size", [&args](const std::string& text) { args.chunk_len = size_value(text); },
         "Chunk size of the engines (default 1M; cfb8 64K, cfb1 16K)")
      ->check(chunk_size_validator());
  cmd->add_flag("--json", args.json, "Print a JSON array of records instead of the table");
  return cmd;
}

int run_bench(const BenchArgs& args) {
  std::vector<Mode> modes;
  for (const auto& name : args.modes) {
    const auto mode = parse_mode(name);
    if (!mode) throw usage_error("unknown mode '" + name + "' in --modes");
    modes.push_back(*mode);
  }
  if (modes.empty()) modes.assign(std::begin(kAllModes), std::end(kAllModes));
  const std::vector<std::uint64_t> sizes = args.sizes.empty() ? std::vector<std::uint64_t>{64u << 20} : args.sizes;
  const unsigned max_threads = args.threads != 0 ? args.threads : online_cpus();
  const std::uint64_t chunk_len = args.chunk_len;  // 0: each mode's default

  nlohmann::json records = nlohmann::json::array();
  if (!args.json) {
    std::printf("%-5s %-7s %4s %9s | %8s | %8s %6s |", "mode", "dir", "bits", "bytes", "openssl",
                "serial", "x ossl");
    for (unsigned t = 1; t <= max_threads; ++t) std::printf(" %4ut GB/s  x ser |", t);
    std::printf("\n");
  }

  for (const std::uint64_t requested : sizes) {
    for (const Mode mode : modes) {
      const std::uint64_t size = size_for(mode, requested);
      for (const unsigned bits : args.key_bits) {
        for (const auto& direction_text : args.directions) {
          CipherSpec spec;
          spec.mode = mode;
          spec.direction = direction_text == "encrypt" ? Direction::encrypt : Direction::decrypt;
          spec.key = SecretBytes(bits / 8);
          std::vector<std::uint8_t> input(size);
          if (RAND_bytes(spec.key.data(), static_cast<int>(spec.key.size())) != 1 ||
              RAND_bytes(spec.iv.data(), static_cast<int>(spec.iv.size())) != 1 ||
              RAND_bytes(input.data(), static_cast<int>(std::min<std::uint64_t>(size, 1 << 20))) != 1) {
            throw Error("OpenSSL's random generator failed");
          }
          for (std::uint64_t i = 1u << 20; i < size; ++i) input[i] = input[i & 0xfffff];
          if (spec.direction == Direction::decrypt) {
            // Decrypt real ciphertext so padded modes see valid padding.
            CipherSpec encrypt_spec{spec.mode, Direction::encrypt, spec.key.clone(), spec.iv, true};
            input = openssl_oneshot(encrypt_spec, input);
          }
          std::vector<std::uint8_t> output(input.size() + kBlockLen, 0);

          std::vector<Candidate> candidates;
          candidates.push_back({"openssl", 1, [&] { openssl_oneshot_into(spec, output.data(), input); }});
          candidates.push_back({"serial", 1, [&] {
                                  transform_memory(spec, output, input, {EngineKind::serial, 1, chunk_len, false, {}});
                                }});
          for (unsigned t = 1; t <= max_threads; ++t) {
            candidates.push_back({"threads", t, [&, t] {
                                    transform_memory(spec, output, input, {EngineKind::threads, t, chunk_len, false, {}});
                                  }});
          }
          const std::vector<Measurement> rows = time_round_robin(candidates, args.repeat);

          for (const auto& row : rows) {
            records.push_back({{"mode", mode_name(mode)},
                               {"direction", direction_text},
                               {"key_bits", bits},
                               {"engine", row.engine},
                               {"threads", row.threads},
                               {"parallel", row.engine == "openssl" ? false : is_parallel(mode, spec.direction) && row.threads > 1},
                               {"bytes", input.size()},
                               {"chunk_size", ChunkPlan(spec, chunk_len).chunk_len()},
                               {"repeat", args.repeat},
                               {"seconds", row.seconds},
                               {"min_seconds", row.min_seconds},
                               {"max_seconds", row.max_seconds},
                               {"gbps", gbps(input.size(), row.seconds)}});
          }
          if (!args.json) {
            const double ossl = gbps(input.size(), rows[0].seconds);
            const double serial = gbps(input.size(), rows[1].seconds);
            std::printf("%-5s %-7s %4u %9zu | %8.3f | %8.3f %6.2f |", std::string(mode_name(mode)).c_str(),
                        direction_text.c_str(), bits, input.size(), ossl, serial, serial / ossl);
            for (std::size_t r = 2; r < rows.size(); ++r) {
              const double rate = gbps(input.size(), rows[r].seconds);
              std::printf(" %10.3f %6.2f |", rate, rate / serial);
            }
            std::printf("\n");
            std::fflush(stdout);
          }
        }
      }
    }
  }
  if (args.json) std::cout << records.dump(1) << '\n';
  return 0;
}

}  // namespace paes::cli
