// Who runs a job's chunks. An engine knows nothing of modes' or formats'
// mathematics: it asks the job for chunk geometry and workers, and moves
// bytes between threads, files and streams.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "paes/backend.hpp"  // PinnedMemory, GpuGeometry
#include "paes/io.hpp"
#include "paes/job.hpp"

namespace paes {

// automatic: --engine auto, a GPU when present and worth it, else threads.
enum class EngineKind { serial, threads, mpi, opencl, cuda, automatic };

std::string_view engine_name(EngineKind kind);
std::optional<EngineKind> parse_engine(std::string_view name);
// The engines this build contains, in the order `paes info` lists them.
std::string_view compiled_engines();

// Throws the usage Error that refuses streams (stdin, stdout, pipes) to an
// engine that can't run them: mpi, whose ranks each open the input and output
// files themselves. Returns for every other engine. The mpi engine's
// run_stream throws the same Error; a caller may check first, before it
// reads a key or opens anything.
void check_streams(EngineKind kind);

// One device of the opencl or cuda engine, as `paes info` lists it;
// --device takes `index`.
struct GpuDevice {
  unsigned index = 0;
  std::string name;
  std::string type;                // "gpu"; OpenCL also "cpu", "accelerator", "other"
  std::string platform;            // OpenCL: the platform's name; CUDA: empty
  std::string version;             // OpenCL: CL_DEVICE_VERSION; CUDA: empty
  std::string compute_capability;  // CUDA: e.g. "9.0"; OpenCL: empty
  unsigned compute_units = 0;      // OpenCL compute units, CUDA multiprocessors
};

// The devices the opencl or cuda engine (kind) can use; empty for the other
// engines, for one this build lacks, and where there is no driver or device.
// Throws Error only on a failing driver call past that.
std::vector<GpuDevice> list_gpu_devices(EngineKind kind);

// What `paes info` says of a GPU API beside its devices: for cuda, the
// runtime paes was built with and the driver's version ("runtime 13.0,
// driver 12.8", "driver none" without one), which tells why a machine with a
// GPU lists none (a driver older than the runtime). Empty for the other
// engines (OpenCL: each device names its platform) and one this build lacks.
std::string gpu_api_versions(EngineKind kind);

// The least input --engine auto considers running on a GPU: below it,
// starting a device costs more than it could save.
inline constexpr std::uint64_t kAutoGpuMinBytes = std::uint64_t{256} << 20;

// What --engine auto measured and kept on this machine as it is now (its
// CPU and GPU stack: docs/GPU.md), one entry per kind of job, for `paes
// info`. Reads the cache only: starts no driver.
struct AutoVerdict {
  std::string job;         // e.g. "ctr encrypt AES-128, 16 threads, ipsec-mb"
  std::string gpu_engine;  // "cuda" or "opencl"; empty where auto found no GPU
  std::string device;      // the GPU's name
  double gpu_bytes_per_s = 0;    // the GPU engine in memory, with its transfers
  double cpu_bytes_per_s = 0;    // the threads engine
  double gpu_start_seconds = 0;  // finding, starting and self-testing the GPU
  std::optional<std::uint64_t> gpu_from_bytes;  // the least input auto runs on the GPU; none: never
};
std::vector<AutoVerdict> kept_auto_verdicts();
// The file auto keeps them in; empty where there is no home for it.
std::string auto_rate_cache_path();

// Told the input bytes of each finished chunk, from any worker thread.
using ProgressCallback = std::function<void(std::uint64_t)>;

class Engine {
 public:
  virtual ~Engine() = default;
  virtual EngineKind kind() const = 0;
  // Workers that run cipher work for the job on an input of this length.
  virtual unsigned workers_for(const Job& job, std::uint64_t input_len) const = 0;
  // Transforms the whole of `in` into `out` and returns the output length.
  // Throws Error on the first failure of any chunk; `out` may then hold
  // partial data, which the caller must discard.
  virtual std::uint64_t run(const Job& job, Source& in, Sink& out) = 0;
  // The same for a stream read front to back and written in order. Each
  // chunk's output is written only after its worker finished it (for the
  // sealed format: after it verified). Returns the output length.
  virtual std::uint64_t run_stream(const Job& job, StreamReader& in, StreamWriter& out) = 0;

  void on_progress(ProgressCallback callback) { progress_ = std::move(callback); }

  // Per-process timings of the last run: one entry per MPI rank for the mpi
  // engine, none for the others.
  struct RankTiming {
    double compute_seconds = 0;  // its range: reading, cipher and writing, overlapped
    double io_seconds = 0;       // opening the files, and making its writes durable
    std::uint64_t bytes_in = 0;
    unsigned threads = 0;
  };
  virtual std::vector<RankTiming> rank_timings() const { return {}; }
  // Where the last run's time went, for an engine that runs its work as a
  // pipeline of batches (the GPU engines): the busy seconds of each stage.
  // Stages overlap, so the one whose seconds come near the run's wall time
  // is what limits it. None for the CPU engines, or a job a GPU engine sent
  // to the CPU.
  struct PipelineTimes {
    std::uint64_t batches = 0;
    std::uint64_t batch_bytes = 0;
    double fill_seconds = 0;         // reading input into the batches' page-locked memory
    double device_wait_seconds = 0;  // waiting for the device: uploads, kernels, downloads not hidden
    double drain_seconds = 0;        // checking each batch's sample blocks, writing its output
  };
  virtual std::optional<PipelineTimes> pipeline_times() const { return std::nullopt; }
  // Why this engine ran the last job, where it chose one (auto), for -v.
  virtual std::string choice() const { return {}; }

 protected:
  void report(std::uint64_t bytes) const {
    if (progress_) progress_(bytes);
  }

 private:
  ProgressCallback progress_;
};

// threads = 0 means one per online CPU (per rank for mpi: the node's CPUs over
// its ranks; for opencl and cuda, the CPU threads of what the GPU doesn't
// run). The serial engine ignores it. mpi needs an MpiSession. `device`
// picks a GPU by its index in `paes info` (opencl, cuda). Throws a usage
// Error for an engine this build doesn't have.
std::unique_ptr<Engine> make_engine(EngineKind kind, unsigned threads = 0,
                                    std::optional<unsigned> device = std::nullopt);

unsigned online_cpus();

// Whether the GPU engines run `spec` on the device: ECB and CTR both ways,
// CBC and CFB128 decryption. The rest runs on the CPU.
bool runs_on_gpu(const CipherSpec& spec);

// A GPU engine's backend driven directly, without the engine around it (no
// CPU fallback, no files): for `paes bench`, which times the kernels apart
// from the transfers, and for a program that sends its own, pinned buffers
// through the device again and again (pin_memory).
class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  // Transforms a whole message (runs_on_gpu(spec) must hold); `out` must
  // hold len + 16 bytes. Returns the bytes written. Throws Error.
  virtual std::size_t transform(const CipherSpec& spec, std::uint8_t* out, const std::uint8_t* in,
                                std::size_t len) = 0;
  // Device time in kernels since the backend opened or reset_stats().
  virtual double kernel_seconds() const = 0;
  virtual void reset_stats() = 0;
  // What the page-locked link moves, bytes per second, on `bytes` each way:
  // up alone, down alone, and each way while both run. The best of `repeats`.
  struct LinkRates {
    double up = 0;
    double down = 0;
    double both = 0;
  };
  virtual LinkRates measure_link(std::size_t bytes, unsigned repeats) = 0;
  // Seconds the kernel of `spec` takes alone on `bytes` already on the device,
  // by the device's own events: no transfers. The best of `repeats`.
  virtual double kernel_only_seconds(const CipherSpec& spec, std::size_t bytes, unsigned repeats) = 0;
  // Page-locks [data, data + len) while the handle lives: transform() then
  // moves messages lying in pinned memory straight between it and the device.
  virtual PinnedMemory pin_memory(const void* data, std::size_t len) = 0;
};

// The GPU engines' batch: the bytes of one kernel launch and of each lane's
// buffers.
inline constexpr std::size_t kGpuBatchBytes = std::size_t{16} << 20;

// The backend of the opencl or cuda engine (kind) on `device` (as --device;
// unset: the engine's default), in batches of `batch_bytes`, launched with
// `geometry`, its kernels timed, started and self-tested. Throws a usage Error
// for another kind or one this build lacks, or a geometry the device refuses,
// and what starting the device throws.
std::unique_ptr<GpuBackend> open_gpu_backend(EngineKind kind, std::optional<unsigned> device,
                                             std::size_t batch_bytes, const GpuGeometry& geometry = {});

}  // namespace paes
