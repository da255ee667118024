// paes bench: in-memory throughput, no I/O. For each mode, direction and key
// size it times OpenSSL's own one-shot transform (one EVP context over the
// whole buffer, what `openssl enc` does minus its I/O), the serial engine and
// the threads engine at 1..N threads, each on every cipher backend asked for
// (--backend), all in this one process, and prints ratios against those
// baselines. Each figure is the median of --repeat runs,
// taken round-robin after a warm-up (see time_round_robin).
#include <stdlib.h>  // mkstemp
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <span>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/say.hpp"
#include "paes/backend.hpp"
#include "paes/engine.hpp"
#include "paes/error.hpp"
#include "paes/io.hpp"
#include "paes/plan.hpp"
#include "paes/secret.hpp"
#include "paes/transform.hpp"
#include "util/size.hpp"
// The benchmark's subjects beside the engines (docs/ARCHITECTURE.md,
// "Exceptions"): OpenSSL's one-shot transform, the baseline every figure is
// a ratio to, and the sealed body and age's payload as jobs run in memory
// (the public API seals only files and streams).
#include "cipher/oneshot.hpp"
#include "format/age_format.hpp"
#include "format/sealed_format.hpp"
#include "util/elapsed.hpp"

namespace paes::cli {
namespace {

// --backend's choices here: auto and the CPU backends (a GPU's figures are
// --engine's).
std::vector<std::string> backend_choices() {
  std::vector<std::string> choices{std::string(kAutoBackend)};
  for (const CipherBackendName& row : cipher_backend_names()) choices.push_back(row.name);
  return choices;
}

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

// The median of a figure's timings: the upper of the two middle values when
// their count is even (the sorted copy's element size / 2). Never empty.
double median(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

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
      seconds[i].push_back(seconds_since(start));
    }
  }
  std::vector<Measurement> results;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto [min, max] = std::minmax_element(seconds[i].begin(), seconds[i].end());
    results.push_back({candidates[i].engine, candidates[i].threads, median(seconds[i]), *min, *max});
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

constexpr const char* kBenchFooter = R"(Examples:
  paes bench                                   # every mode, direction and key size
  paes bench --modes ctr,cbc --key-bits 256 --size 1G --threads 8
  paes bench --size 16K,64K,256K,1M --modes ctr --threads 2 --chunk-size 16K --json

  paes bench --modes ctr,sealed --key-bits 256 --backend openssl,ipsec-mb --thread-counts 1,2

Columns: OpenSSL one-shot GB/s; the cipher backend the engines ran; the
serial engine's GB/s and its ratio to OpenSSL one-shot (on ipsec-mb: how much
faster one core is than OpenSSL); the threads engine's GB/s at each thread
count and its speed-up over serial on the same backend. With several
backends, each case gets a line per backend, all timed round-robin in one
run; a mode a backend doesn't run itself (e.g. OFB on ipsec-mb) runs on
OpenSSL and is shown once. GB/s is 10^9 bytes per second of input. CFB8 and
CFB1 use 1/8 and 1/64 of --size (at least 64K) since they run one AES per byte
or bit.)";

// What to measure: the buffer sizes, modes, key sizes and directions.
void add_case_options(CLI::App* cmd, BenchArgs& args) {
  cmd->add_option_function<std::vector<std::string>>(
         "--size", [&args](const std::vector<std::string>& texts) {
           args.sizes.clear();
           for (const auto& text : texts) {
             // An empty buffer has no throughput: every ratio would be 0/0.
             if (size_value(text) == 0) throw CLI::ValidationError("--size", "a size of 0 measures nothing");
             args.sizes.push_back(size_value(text));
           }
         },
         "Buffer sizes, comma-separated (default 64M)")
      ->type_name("SIZES")
      ->delimiter(',')
      ->check(size_validator());
  cmd->add_option("--modes", args.modes,
                  "Modes, comma-separated: ecb, cbc, cfb, cfb8, cfb1, ofb, ctr, sealed, age (age's ChaCha20-Poly1305 "
                  "payload, run with --key-bits 256 only) (default: all)")
      ->type_name("MODES")
      ->delimiter(',');
  cmd->add_option("--key-bits", args.key_bits, "Key sizes, comma-separated: 128, 192, 256 (default all three)")
      ->type_name("BITS")
      ->delimiter(',')
      ->check(with_choices(key_bits_validator(), {"128", "192", "256"}));
  cmd->add_option("--directions", args.directions, "encrypt, decrypt, or encrypt,decrypt (the default)")
      ->type_name("LIST")
      ->delimiter(',')
      ->check(with_choices(CLI::IsMember({"encrypt", "decrypt"}).description(""), {"encrypt", "decrypt"}));
}

// How to measure the CPU engines: thread counts, repeats, chunk size, backends.
void add_timing_options(CLI::App* cmd, BenchArgs& args) {
  cmd->add_option("--thread-counts", args.thread_counts,
                  "Exact thread counts to measure, each 1 to 4096, e.g. 1,2,4 (overrides --threads)")
      ->type_name("N")
      ->delimiter(',')
      ->check(whole_number_validator(1u, 4096u));
  cmd->add_option("--threads,-t", args.threads, "Sweep the threads engine from 1 to N, at most 4096 (default: online CPUs)")
      ->type_name("N")
      ->check(whole_number_validator(1u, 4096u));
  cmd->add_option("--repeat,-r", args.repeat, "Timed runs per figure, 1 to 1000; the median is reported")
      ->type_name("N")
      ->check(whole_number_validator(1u, 1000u))
      ->capture_default_str();
  cmd->add_option_function<std::string>(
         "--chunk-size", [&args](const std::string& text) { args.chunk_len = size_value(text); },
         "Chunk size of the engines, 16 to 1G (default: 1M, cfb8 64K, cfb1 16K, down to a quarter of that so each thread gets 4 chunks)")
      ->type_name("SIZE")
      ->check(chunk_size_validator());
  cmd->add_option("--backend", args.backends,
                  "Backends to time, comma-separated: auto (default) or any of 'paes info' (a GPU in the table runs its "
                  "modes in memory; --engine GPU gives its own figures)")
      ->type_name("NAMES")
      ->delimiter(',')
      ->check(with_choices(CLI::IsMember(backend_choices()).description(""), backend_choices()));
}

// --engine GPU's figures and their launch geometries.
void add_gpu_options(CLI::App* cmd, BenchArgs& args) {
  cmd->add_option("--engine", args.engine,
                  "A GPU backend (paes info): the GPU's page-locked link, then per work size kernel-only, with transfers "
                  "(staged, and where the device can pin, with the caller's memory pinned, and the pinning's "
                  "cost) and end-to-end file figures (--size lists the work sizes; bench/gpu/gpu_bench.py runs "
                  "the set)")
      ->type_name("GPU");
  cmd->add_option("--device", args.device, "With --engine: the GPU's index in 'paes info'")->type_name("N");
  cmd->add_option("--group-sizes", args.group_sizes,
                  "With --engine: kernel-only figures (nothing else) for each of these threads per block or "
                  "work-group sizes (multiples of 32 up to 1024 on some APIs), e.g. 128,256,512,1024")
      ->type_name("N")
      ->delimiter(',')
      ->check(whole_number_validator(1u, 1024u));
  cmd->add_option("--blocks-per-item", args.blocks_per_item,
                  "With --engine: kernel-only figures (nothing else) for each of these counts of 16-byte blocks "
                  "per GPU thread, 1 to 4096, e.g. 1,4,8,32 (with --group-sizes, every pair)")
      ->type_name("N")
      ->delimiter(',')
      ->check(whole_number_validator(1u, 4096u));
}

}  // namespace

CLI::App* add_bench_command(CLI::App& app, BenchArgs& args) {
  CLI::App* cmd = app.add_subcommand("bench", "Measure in-memory throughput against OpenSSL");
  cmd->footer(kBenchFooter);
  add_case_options(cmd, args);
  add_timing_options(cmd, args);
  add_gpu_options(cmd, args);
  cmd->add_flag("--json", args.json, "Print a JSON array of records instead of the table");
  return cmd;
}

namespace {

// One row of the benchmark: an input, OpenSSL's one-shot transform of it, and
// the paes job that does the same work, run in memory by each engine.
struct BenchCase {
  std::string mode;
  Direction direction = Direction::encrypt;
  unsigned key_bits = 0;
  std::vector<std::uint8_t> input;
  std::function<void(std::uint8_t* out)> openssl;
  std::unique_ptr<CipherSpec> spec;   // raw modes: what the plan refers to
  std::unique_ptr<SecretBytes> key;   // sealed: the segment key the job refers to
  // For the threads engine on `workers` threads (1: the serial engine), on
  // `backend`.
  std::function<std::unique_ptr<Job>(unsigned workers, const BackendChoice& backend)> make_job;
};

// The case's job on one cipher backend.
struct BackendJob {
  std::string backend;  // the one that runs it
  std::unique_ptr<Job> serial;
  std::vector<std::unique_ptr<Job>> threads;  // for each thread count
};

// One job per requested backend (in the order asked); a request that
// resolves to a backend already there (auto, or a mode ipsec-mb or a GPU
// hands to the CPU's backend) is left out.
std::vector<BackendJob> jobs_on_backends(const BenchCase& c, const std::vector<std::string>& backends,
                                         const std::vector<unsigned>& thread_counts) {
  std::vector<BackendJob> jobs;
  for (const std::string& requested : backends) {
    const BackendChoice backend{requested, std::nullopt};
    // age's ChaCha20 is OpenSSL's whatever the backend: one row.
    const std::string ran = c.mode == "age" ? "openssl"
                            : c.spec       ? raw_backend_name(backend, c.spec->mode, c.spec->direction)
                                           : segment_backend_name(backend);
    const bool seen = std::any_of(jobs.begin(), jobs.end(), [&](const BackendJob& j) { return j.backend == ran; });
    if (seen) continue;
    BackendJob j{ran, c.make_job(1, backend), {}};
    for (const unsigned t : thread_counts) j.threads.push_back(c.make_job(t, backend));
    jobs.push_back(std::move(j));
  }
  return jobs;
}

std::vector<std::uint8_t> bench_input(std::uint64_t size) {
  std::vector<std::uint8_t> input(size);
  random_bytes({input.data(), static_cast<std::size_t>(std::min<std::uint64_t>(size, 1 << 20))});
  for (std::uint64_t i = 1u << 20; i < size; ++i) input[i] = input[i & 0xfffff];
  return input;
}

BenchCase raw_case(Mode mode, Direction direction, unsigned bits, std::uint64_t size, std::uint64_t chunk_len) {
  BenchCase c;
  c.mode = mode_name(mode);
  c.direction = direction;
  c.key_bits = bits;
  c.spec = std::make_unique<CipherSpec>();
  c.spec->mode = mode;
  c.spec->direction = direction;
  c.spec->key = SecretBytes(bits / 8);
  random_bytes({c.spec->key.data(), c.spec->key.size()});
  random_bytes(c.spec->iv);
  c.input = bench_input(size);
  if (direction == Direction::decrypt) {  // real ciphertext, so padded modes see valid padding
    const CipherSpec encrypt_spec{mode, Direction::encrypt, c.spec->key.clone(), c.spec->iv, true};
    c.input = openssl_oneshot(encrypt_spec, c.input);
  }
  c.openssl = [&spec = *c.spec, &input = c.input](std::uint8_t* out) { openssl_oneshot_into(spec, out, input); };
  // Unless --chunk-size was given, the chunk length the threads engine fits to
  // this size and thread count, as for a file.
  c.make_job = [&spec = *c.spec, chunk_len, size = c.input.size()](unsigned workers, const BackendChoice& backend) {
    const std::uint64_t preferred = backend_chunk_len(backend, spec.mode, spec.direction);
    return std::make_unique<ChunkPlan>(
        spec, ChunkPlan::decide_chunk_len(spec.mode, chunk_len, preferred, size, workers), backend);
  };
  return c;
}

// The sealed format's segments (1 MiB, no preamble: in memory there is no
// file to frame). The OpenSSL baseline is one-shot AES-GCM over the buffer.
BenchCase sealed_case(Direction direction, unsigned bits, std::uint64_t size) {
  BenchCase c;
  c.mode = "sealed";
  c.direction = direction;
  c.key_bits = bits;
  c.key = std::make_unique<SecretBytes>(bits / 8);
  random_bytes({c.key->data(), c.key->size()});
  NoncePrefix prefix;
  random_bytes(prefix);
  c.input = bench_input(size);
  std::vector<std::uint8_t> gcm_input = c.input;
  if (direction == Direction::decrypt) {
    const SegmentJob seal(Direction::encrypt, c.key->size(), kDefaultSegmentLen, *c.key, prefix,
                          BackendChoice{});
    std::vector<std::uint8_t> sealed(output_capacity(seal, c.input.size()));
    MemorySource source(c.input);
    MemorySink sink(sealed);
    sealed.resize(make_engine(EngineKind::serial)->run(seal, source, sink));
    c.input = std::move(sealed);
    gcm_input.resize(gcm_input.size() + 16);
    gcm_input.resize(openssl_gcm_oneshot_into(*c.key, Direction::encrypt, gcm_input.data(),
                                              {c.input.data(), size}));
  }
  c.openssl = [&key = *c.key, direction, gcm = std::move(gcm_input)](std::uint8_t* out) {
    openssl_gcm_oneshot_into(key, direction, out, gcm);
  };
  c.make_job = [direction, &key = *c.key, prefix](unsigned, const BackendChoice& backend) {
    return std::make_unique<SegmentJob>(direction, key.size(), kDefaultSegmentLen, key, prefix, backend);
  };
  return c;
}

// age's payload: 64 KiB ChaCha20-Poly1305 chunks, sixteen to an engine's
// chunk (no header: in memory there is no file to frame), on OpenSSL's
// ChaCha20 whatever the backend. The OpenSSL baseline is one-shot
// ChaCha20-Poly1305 over the buffer, as one chunk as long as it.
BenchCase age_case(Direction direction, std::uint64_t size) {
  BenchCase c;
  c.mode = "age";
  c.direction = direction;
  c.key_bits = kAgePayloadKeyLen * 8;
  c.key = std::make_unique<SecretBytes>(kAgePayloadKeyLen);
  random_bytes({c.key->data(), c.key->size()});
  c.input = bench_input(size);
  std::vector<std::uint8_t> oneshot = c.input;
  if (direction == Direction::decrypt) {
    oneshot.resize(size + kTagLen);
    AgeChunkCodec(*c.key, Direction::encrypt).seal(0, true, oneshot.data(), c.input.data(), c.input.size());
    const SegmentJob seal(Direction::encrypt, std::make_shared<AgeChunks>(*c.key));
    std::vector<std::uint8_t> sealed(output_capacity(seal, c.input.size()));
    MemorySource source(c.input);
    MemorySink sink(sealed);
    sealed.resize(make_engine(EngineKind::serial)->run(seal, source, sink));
    c.input = std::move(sealed);
  }
  auto codec = std::make_shared<AgeChunkCodec>(*c.key, direction);
  c.openssl = [codec, direction, one = std::move(oneshot)](std::uint8_t* out) {
    if (direction == Direction::encrypt) {
      codec->seal(0, true, out, one.data(), one.size());
    } else {
      codec->open(0, true, out, one.data(), one.size());
    }
  };
  c.make_job = [direction, &key = *c.key](unsigned, const BackendChoice&) {
    return std::make_unique<SegmentJob>(direction, std::make_shared<AgeChunks>(key));
  };
  return c;
}

std::uint64_t run_in_memory(const Job& job, EngineKind kind, unsigned threads,
                            std::span<std::uint8_t> out, std::span<const std::uint8_t> in) {
  MemorySource source(in);
  MemorySink sink(out);
  return make_engine(kind, threads)->run(job, source, sink);
}

}  // namespace

namespace {

// The GPU figures of one case at one work size, each a list of --repeat timings.
struct GpuTimings {
  std::vector<double> kernel;     // the kernel alone on `work` bytes on the device (its events)
  std::vector<double> transfers;  // wall time of the in-memory transform, copies included
  // The same with the caller's input and output pinned before (GpuProbe::pin_memory),
  // and the time pinning and unpinning them took; empty where the device
  // can't pin memory it didn't allocate.
  std::vector<double> transfers_pinned;
  std::vector<double> pin;
  std::vector<double> file;  // transform_file through the engine, page cache warm
};

// Kernel-only timings of `work` bytes on the device, and with-transfers
// timings of the whole input through a backend whose batches are `work`
// bytes, after a warm-up transform.
void time_gpu_memory(GpuTimings& timings, const BenchArgs& args, const std::string& backend, const BenchCase& c,
                     std::uint64_t work, std::vector<std::uint8_t>& output) {
  const std::unique_ptr<GpuProbe> gpu = open_gpu_probe(backend, args.device, static_cast<std::size_t>(work));
  gpu->transform(*c.spec, output, c.input, args.threads);  // warm-up
  for (unsigned r = 0; r < args.repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    gpu->transform(*c.spec, output, c.input, args.threads);
    timings.transfers.push_back(seconds_since(start));
    timings.kernel.push_back(gpu->kernel_only_seconds(*c.spec, static_cast<std::size_t>(work), 1));
  }
  for (unsigned r = 0; r < args.repeat; ++r) {
    const auto pin_start = std::chrono::steady_clock::now();
    PinnedMemory pinned_in = gpu->pin_memory(c.input.data(), c.input.size());
    PinnedMemory pinned_out = gpu->pin_memory(output.data(), output.size());
    double pin_seconds = seconds_since(pin_start);
    if (!pinned_in.pinned() || !pinned_out.pinned()) return;
    const auto start = std::chrono::steady_clock::now();
    gpu->transform(*c.spec, output, c.input, args.threads);
    timings.transfers_pinned.push_back(seconds_since(start));
    const auto unpin_start = std::chrono::steady_clock::now();
    pinned_in.reset();
    pinned_out.reset();
    pin_seconds += seconds_since(unpin_start);
    timings.pin.push_back(pin_seconds);
  }
}

// The end-to-end figure's files in the temporary directory, which no exit
// leaves behind: the input is unlinked as soon as it is written and read
// through its descriptor (/proc/self/fd), and each output is removed once
// timed (a signal mid-run removes the unfinished one, as for any output).
class BenchFiles {
 public:
  explicit BenchFiles(std::span<const std::uint8_t> input)
      : out_(std::filesystem::temp_directory_path() / ("paes-gpu-bench-" + std::to_string(::getpid()) + ".out")) {
    std::string name = (std::filesystem::temp_directory_path() / "paes-gpu-bench-in.XXXXXX").string();
    fd_ = ::mkstemp(name.data());
    if (fd_ < 0) throw system_error("can't create the benchmark's input in " + name);
    ::unlink(name.c_str());
    for (std::size_t done = 0; done < input.size();) {
      const ssize_t n = ::write(fd_, input.data() + done, input.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const Error error = system_error("can't write the benchmark's input in " + name);
        ::close(fd_);
        throw error;
      }
      done += static_cast<std::size_t>(n);
    }
  }
  ~BenchFiles() {
    remove_output();
    ::close(fd_);
  }
  BenchFiles(const BenchFiles&) = delete;
  BenchFiles& operator=(const BenchFiles&) = delete;

  std::filesystem::path input() const { return "/proc/self/fd/" + std::to_string(fd_); }
  const std::filesystem::path& output() const { return out_; }
  void remove_output() const {
    std::error_code ignored;
    std::filesystem::remove(out_, ignored);
  }

 private:
  int fd_ = -1;
  std::filesystem::path out_;
};

// End-to-end timings of `files`' input to its output through the threads
// engine on the GPU backend of --engine (and --device).
void time_gpu_file(GpuTimings& timings, const BenchArgs& args, const BenchCase& c, const BenchFiles& files) {
  TransformOptions file_options;
  file_options.engine = EngineKind::threads;
  file_options.backend = {args.engine, args.device};
  file_options.threads = args.threads;
  file_options.force = true;
  for (unsigned r = 0; r < args.repeat; ++r) {
    timings.file.push_back(transform_file(*c.spec, files.input(), files.output(), file_options).seconds);
    files.remove_output();
  }
}

// One record (and, without --json, one line) per figure of a work size.
void report_gpu_figures(nlohmann::json& records, const BenchArgs& args, const std::string& backend, const std::string& mode,
                        const std::string& direction_text, unsigned bits, std::uint64_t work, std::uint64_t bytes,
                        const GpuTimings& timings) {
  const std::uint64_t gpu_threads = work / kBlockLen / 8;
  // pin: bytes of the input per second of pinning and unpinning input and
  // output (what pinning for one call would cost).
  const std::pair<const char*, std::uint64_t> figures[] = {{"kernel", work},           {"transfers", bytes},
                                                           {"transfers_pinned", bytes}, {"pin", bytes},
                                                           {"file", bytes}};
  const std::vector<double>* seconds_of[] = {&timings.kernel, &timings.transfers, &timings.transfers_pinned,
                                             &timings.pin, &timings.file};
  for (std::size_t f = 0; f < std::size(figures); ++f) {
    const auto [figure, figure_bytes] = figures[f];
    if (seconds_of[f]->empty()) continue;  // the device can't pin
    const double seconds = median(*seconds_of[f]);
    records.push_back({{"mode", mode}, {"direction", direction_text}, {"key_bits", bits},
                       {"engine", backend}, {"threads", gpu_threads}, {"figure", figure},
                       {"work_bytes", work}, {"bytes", figure_bytes}, {"repeat", args.repeat},
                       {"seconds", seconds}, {"gbps", gbps(figure_bytes, seconds)}});
    if (!args.json) {
      std::printf("%-4s %-7s %4u work %9llu B (%8llu GPU threads)  %-16s %8.3f GB/s\n", mode.c_str(),
                  direction_text.c_str(), bits, static_cast<unsigned long long>(work),
                  static_cast<unsigned long long>(gpu_threads), figure, gbps(figure_bytes, seconds));
    }
  }
}

// The modes of --modes (default: `fallback`), all checked before any is
// measured: a typo is a usage error at once, not after minutes of figures.
std::vector<Mode> gpu_bench_modes(const BenchArgs& args, const std::vector<Mode>& fallback) {
  if (args.modes.empty()) return fallback;
  std::vector<Mode> modes;
  for (const auto& name : args.modes) {
    const auto mode = parse_mode(name);
    if (!mode) throw usage_error("unknown mode '" + name + "' in --modes (with --engine: a raw mode)");
    modes.push_back(*mode);
  }
  return modes;
}

// A case a GPU backend hands to the CPU (the sequential directions, CFB8
// and CFB1) has no GPU figure; with `tell`, said on stderr (so that --json
// stays clean): once per mode and direction, not per key size.
bool gpu_runs_case(const std::string& backend, const BenchCase& c, bool tell) {
  if (backend_runs(backend, c.spec->mode, c.spec->direction)) return true;
  if (!tell) return false;
  say("paes: " + std::string(mode_name(c.spec->mode)) + " " + std::string(direction_name(c.spec->direction)) +
      " runs on the CPU on every backend (paes bench without --engine): no GPU figure\n");
  return false;
}

// Every work size of one mode, key size and direction.
void bench_gpu_case(nlohmann::json& records, const BenchArgs& args, const std::string& backend, Mode mode, unsigned bits,
                    const std::string& direction_text, std::uint64_t size,
                    const std::vector<std::uint64_t>& work_sizes) {
  const Direction direction = direction_text == "encrypt" ? Direction::encrypt : Direction::decrypt;
  const BenchCase c = raw_case(mode, direction, bits, size, 0);
  if (!gpu_runs_case(backend, c, bits == args.key_bits.front())) return;
  std::vector<std::uint8_t> output(c.input.size() + kBlockLen);
  const BenchFiles files(c.input);
  for (const std::uint64_t work : work_sizes) {
    GpuTimings timings;
    time_gpu_memory(timings, args, backend, c, work, output);
    time_gpu_file(timings, args, c, files);
    report_gpu_figures(records, args, backend, std::string(mode_name(mode)), direction_text, bits, work,
                       c.input.size(), timings);
  }
}

}  // namespace

// The GPU figures of `paes bench --engine GPU` (a GPU backend): the start-up, the
// page-locked link (up, down, both ways at once), then for each work size (bytes per kernel
// launch) kernel-only (that many bytes already on the device, by its own
// events), with transfers (wall time of the in-memory transform through the
// threads engine's workers, each driving a lane: staged, then with input and
// output pinned beforehand, and the time pinning and unpinning took) and end
// to end on a file (transform_file on the backend, page cache warm). GPU
// threads = work size / 16 / blocks per item.
void bench_gpu(const BenchArgs& args, const std::string& backend, nlohmann::json& records) {
  const std::vector<std::uint64_t> work_sizes =
      args.sizes.empty() ? std::vector<std::uint64_t>{1u << 20, 4u << 20, 16u << 20, 64u << 20} : args.sizes;
  const std::uint64_t size = std::max<std::uint64_t>(work_sizes.back(), 64u << 20);
  const std::vector<Mode> modes = gpu_bench_modes(args, {Mode::ctr, Mode::ecb, Mode::cbc, Mode::cfb128});
  // The start-up, once: what `paes encrypt --engine E` pays before its first
  // byte (the driver, the device, its buffers and the AES self-test), the
  // first start in this process as in that one. Then the page-locked link:
  // what the with-transfers figures are bounded by.
  {
    const auto start = std::chrono::steady_clock::now();
    const std::unique_ptr<GpuProbe> first = open_gpu_probe(backend, args.device, 1u << 20);
    const double start_seconds = seconds_since(start);
    records.push_back({{"engine", backend}, {"figure", "start"}, {"seconds", start_seconds}});
    if (!args.json) {
      std::printf("start-up (driver, device, buffers, self-test)  %8.3f s\n", start_seconds);
    }
    const std::size_t link_bytes = static_cast<std::size_t>(std::max<std::uint64_t>(work_sizes.back(), 256u << 20));
    const GpuProbe::LinkRates link = first->measure_link(link_bytes, args.repeat);
    struct LinkFigure {
      const char* figure;
      const char* label;
      double rate;
    };
    for (const LinkFigure& f : {LinkFigure{"link_up", "up", link.up}, LinkFigure{"link_down", "down", link.down},
                                LinkFigure{"link_both_ways", "each way, both at once", link.both}}) {
      records.push_back({{"engine", backend}, {"figure", f.figure}, {"bytes", link_bytes},
                         {"repeat", args.repeat}, {"gbps", f.rate / 1e9}});
      if (!args.json) std::printf("pinned link, %-22s %8.3f GB/s (%zu MiB, best of %u)\n", f.label, f.rate / 1e9,
                                  link_bytes >> 20, args.repeat);
    }
  }
  for (const Mode mode : modes) {
    for (const unsigned bits : args.key_bits) {
      for (const auto& direction_text : args.directions) {
        bench_gpu_case(records, args, backend, mode, bits, direction_text, size, work_sizes);
      }
    }
  }
}

// Kernel-only figures for each launch geometry (--group-sizes x
// --blocks-per-item; an empty list: the engine's default) at each work size
// (default 256 MiB): which launch the device runs fastest, to tune the
// engines' defaults by (bench/gpu/gpu_bench.py sweeps a set).
void bench_gpu_geometry(const BenchArgs& args, const std::string& backend, nlohmann::json& records) {
  const std::vector<std::uint64_t> work_sizes =
      args.sizes.empty() ? std::vector<std::uint64_t>{256u << 20} : args.sizes;
  const std::vector<Mode> modes = gpu_bench_modes(args, {Mode::ctr});
  const std::vector<unsigned> group_sizes = args.group_sizes.empty() ? std::vector<unsigned>{0} : args.group_sizes;
  const std::vector<unsigned> per_item = args.blocks_per_item.empty() ? std::vector<unsigned>{0} : args.blocks_per_item;
  for (const Mode mode : modes) {
    const std::string name(mode_name(mode));
    for (const unsigned bits : args.key_bits) {
      for (const auto& direction_text : args.directions) {
        const Direction direction = direction_text == "encrypt" ? Direction::encrypt : Direction::decrypt;
        const BenchCase c = raw_case(mode, direction, bits, 0, 0);
        if (!gpu_runs_case(backend, c, bits == args.key_bits.front())) continue;
        for (const unsigned group : group_sizes) {
          for (const unsigned items : per_item) {
            const auto gpu = open_gpu_probe(backend, args.device, 1u << 20, {group, items});
            for (const std::uint64_t work : work_sizes) {
              const double seconds = gpu->kernel_only_seconds(*c.spec, static_cast<std::size_t>(work), args.repeat);
              records.push_back({{"mode", name}, {"direction", direction_text}, {"key_bits", bits},
                                 {"engine", backend}, {"figure", "kernel"}, {"group_size", group},
                                 {"blocks_per_item", items}, {"work_bytes", work}, {"bytes", work},
                                 {"repeat", args.repeat}, {"seconds", seconds}, {"gbps", gbps(work, seconds)}});
              if (!args.json) {
                std::printf("%-4s %-7s %4u work %10llu B  group %4s  blocks/item %4s  kernel %8.3f GB/s (best of %u)\n",
                            name.c_str(), direction_text.c_str(), bits, static_cast<unsigned long long>(work),
                            group != 0 ? std::to_string(group).c_str() : "dflt",
                            items != 0 ? std::to_string(items).c_str() : "dflt", gbps(work, seconds), args.repeat);
              }
            }
          }
        }
      }
    }
  }
}

namespace {

// `paes bench --engine GPU`: its kernel geometries where asked, else its figures.
int run_gpu_bench(const BenchArgs& args) {
  nlohmann::json records = nlohmann::json::array();
  if (!names_gpu_backend(args.engine)) {
    throw usage_error("paes bench --engine takes a GPU backend (where built in: paes info); the CPU engines are "
                      "measured by default");
  }
  check_backend_choice({args.engine, args.device});
  if (!args.group_sizes.empty() || !args.blocks_per_item.empty()) {
    bench_gpu_geometry(args, args.engine, records);
  } else {
    bench_gpu(args, args.engine, records);
  }
  if (args.json) std::cout << records.dump(1) << '\n';
  return 0;
}

// --modes, checked (default: every mode, then sealed).
std::vector<std::string> bench_modes(const BenchArgs& args) {
  std::vector<std::string> modes = args.modes;
  if (modes.empty()) {
    for (const Mode mode : kAllModes) modes.emplace_back(mode_name(mode));
    modes.emplace_back("sealed");
    modes.emplace_back("age");
  }
  for (const auto& name : modes) {
    if (name != "sealed" && name != "age" && !parse_mode(name)) {
      throw usage_error("unknown mode '" + name + "' in --modes");
    }
    if (name == "sealed" && std::count(args.key_bits.begin(), args.key_bits.end(), 192u) != 0 && args.modes.size() != 0) {
      throw usage_error("the sealed format takes 128- or 256-bit keys: drop 192 from --key-bits");
    }
  }
  return modes;
}

// --thread-counts, else 1 to --threads (default: the online CPUs).
std::vector<unsigned> bench_thread_counts(const BenchArgs& args) {
  std::vector<unsigned> thread_counts = args.thread_counts;
  if (thread_counts.empty()) {
    const unsigned max_threads = args.threads != 0 ? args.threads : online_cpus();
    for (unsigned t = 1; t <= max_threads; ++t) thread_counts.push_back(t);
  }
  return thread_counts;
}

void print_table_head(const std::vector<unsigned>& thread_counts) {
  std::printf("%-6s %-7s %4s %9s | %8s | %-8s | %8s %6s |", "mode", "dir", "bits", "bytes", "openssl",
              "backend", "serial", "x ossl");
  for (const unsigned t : thread_counts) std::printf(" %4ut GB/s  x ser |", t);
  std::printf("\n");
}

// What time_round_robin times for a case: one OpenSSL one-shot baseline, then
// each backend's serial and threads runs, into `output`; `candidate_jobs`
// gets each candidate's job, in the same order (none for openssl).
std::vector<Candidate> case_candidates(const BenchCase& c, const std::vector<BackendJob>& jobs,
                                       const std::vector<unsigned>& thread_counts, std::vector<std::uint8_t>& output,
                                       std::vector<const Job*>& candidate_jobs) {
  std::vector<Candidate> candidates;
  candidates.push_back({"openssl", 1, [&] { c.openssl(output.data()); }});
  candidate_jobs.push_back(nullptr);
  for (const BackendJob& j : jobs) {
    const Job& serial = *j.serial;
    candidates.push_back({"serial", 1, [&] { run_in_memory(serial, EngineKind::serial, 1, output, c.input); }});
    candidate_jobs.push_back(&serial);
    for (std::size_t k = 0; k < thread_counts.size(); ++k) {
      const Job& job = *j.threads[k];
      const unsigned t = thread_counts[k];
      candidates.push_back({"threads", t, [&, t] { run_in_memory(job, EngineKind::threads, t, output, c.input); }});
      candidate_jobs.push_back(&job);
    }
  }
  return candidates;
}

// One JSON record per measurement of a case.
void add_case_records(nlohmann::json& records, const BenchArgs& args, const BenchCase& c,
                      const std::string& direction_text, unsigned bits, const std::vector<BackendJob>& jobs,
                      const std::vector<const Job*>& candidate_jobs, const std::vector<Measurement>& rows,
                      std::size_t per_backend) {
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const Measurement& row = rows[r];
    const std::string backend = r == 0 ? "openssl" : jobs[(r - 1) / per_backend].backend;
    records.push_back({{"mode", c.mode},
                       {"direction", direction_text},
                       {"key_bits", bits},
                       {"engine", row.engine},
                       {"backend", backend},
                       {"threads", row.threads},
                       {"parallel", row.engine != "openssl" && jobs[0].serial->parallel() && row.threads > 1},
                       {"bytes", c.input.size()},
                       {"chunk_size", candidate_jobs[r == 0 ? 1 : r]->nominal_in_len(1)},
                       {"repeat", args.repeat},
                       {"seconds", row.seconds},
                       {"min_seconds", row.min_seconds},
                       {"max_seconds", row.max_seconds},
                       {"gbps", gbps(c.input.size(), row.seconds)}});
  }
}

// A case's table lines, one per backend.
void print_case_rows(const BenchCase& c, const std::string& direction_text, unsigned bits,
                     const std::vector<BackendJob>& jobs, const std::vector<Measurement>& rows, std::size_t per_backend) {
  const double ossl = gbps(c.input.size(), rows[0].seconds);
  for (std::size_t b = 0; b < jobs.size(); ++b) {
    const std::size_t first = 1 + b * per_backend;
    const double serial = gbps(c.input.size(), rows[first].seconds);
    std::printf("%-6s %-7s %4u %9zu | %8.3f | %-8s | %8.3f %6.2f |", c.mode.c_str(), direction_text.c_str(),
                bits, c.input.size(), ossl, jobs[b].backend.c_str(), serial, serial / ossl);
    for (std::size_t r = first + 1; r < first + per_backend; ++r) {
      const double rate = gbps(c.input.size(), rows[r].seconds);
      std::printf(" %10.3f %6.2f |", rate, rate / serial);
    }
    std::printf("\n");
  }
  std::fflush(stdout);
}

// One case (a mode, key size, direction and size): timed on every backend
// asked for, its records added and, without --json, its lines printed.
void bench_case(nlohmann::json& records, const BenchArgs& args, const std::string& name, unsigned bits,
                const std::string& direction_text, std::uint64_t requested, const std::vector<unsigned>& thread_counts) {
  const Direction direction = direction_text == "encrypt" ? Direction::encrypt : Direction::decrypt;
  const BenchCase c = name == "sealed" ? sealed_case(direction, bits, requested)
                      : name == "age"  ? age_case(direction, requested)
                                       : raw_case(*parse_mode(name), direction, bits,
                                                  size_for(*parse_mode(name), requested), args.chunk_len);
  const std::vector<BackendJob> jobs = jobs_on_backends(c, args.backends, thread_counts);
  std::vector<std::uint8_t> output(std::max<std::uint64_t>(output_capacity(*jobs[0].serial, c.input.size()),
                                                           c.input.size() + kBlockLen));
  std::vector<const Job*> candidate_jobs;
  const std::vector<Candidate> candidates = case_candidates(c, jobs, thread_counts, output, candidate_jobs);
  const std::vector<Measurement> rows = time_round_robin(candidates, args.repeat);
  const std::size_t per_backend = 1 + thread_counts.size();
  add_case_records(records, args, c, direction_text, bits, jobs, candidate_jobs, rows, per_backend);
  if (!args.json) print_case_rows(c, direction_text, bits, jobs, rows, per_backend);
}

}  // namespace

int run_bench(const BenchArgs& args) {
  if (!args.engine.empty()) return run_gpu_bench(args);
  if (!args.group_sizes.empty() || !args.blocks_per_item.empty()) {
    throw usage_error("--group-sizes and --blocks-per-item time GPU kernels: give --engine and a GPU backend");
  }
  const std::vector<std::string> modes = bench_modes(args);
  const std::vector<std::uint64_t> sizes = args.sizes.empty() ? std::vector<std::uint64_t>{64u << 20} : args.sizes;
  const std::vector<unsigned> thread_counts = bench_thread_counts(args);
  nlohmann::json records = nlohmann::json::array();
  if (!args.json) print_table_head(thread_counts);
  for (const std::uint64_t requested : sizes) {
    for (const auto& name : modes) {
      for (const unsigned bits : args.key_bits) {
        if (name == "sealed" && bits == 192) continue;  // Tink's derived keys are 16 or 32 bytes
        if (name == "age" && bits != 256) continue;     // ChaCha20's key is 256 bits
        for (const auto& direction_text : args.directions) {
          bench_case(records, args, name, bits, direction_text, requested, thread_counts);
        }
      }
    }
  }
  if (args.json) std::cout << records.dump(1) << '\n';
  return 0;
}

}  // namespace paes::cli
