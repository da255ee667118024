// Which library runs AES on the CPU: OpenSSL's EVP (every mode, every CPU) or,
// where the build found it, Intel's ipsec-mb (CTR, ECB, CBC and CFB128
// decryption, and the sealed format's AES-GCM, 2-4x faster a core than
// OpenSSL 3.0 on CPUs with VAES). Both give the same bytes; the choice is only
// about speed. The choice is a value, BackendChoice, that the caller puts in
// a job's options (TransformOptions::backend): a job resolves it once, when it
// is made, and every worker (and every MPI rank) runs what it resolved to. Two
// jobs of one process may run on two backends at the same time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "paes/backend_choice.hpp"
#include "paes/mode.hpp"

namespace paes {

// Throws the usage Error (exit 2) that refuses `choice` here, before any work:
// an unknown name, a backend not built in or that this machine can't run, a
// device for a backend that has none, saying which. Returns otherwise. Jobs
// check the same when they resolve a choice.
void check_backend_choice(const BackendChoice& choice);

// One device of a GPU backend, as `paes info` lists it; --device takes `index`.
struct GpuDeviceInfo {
  unsigned index = 0;
  std::string name;
  std::string type;                // "gpu"; an API may also list "cpu", "accelerator", "other"
  std::string platform;            // the platform's name, where the API has platforms
  std::string version;             // the device's version string, where the API has one
  std::string compute_capability;  // e.g. "9.0", where the API numbers them
  unsigned compute_units = 0;      // compute units or multiprocessors
};

struct CipherBackendInfo {
  std::string name;         // "openssl", "ipsec-mb", or a GPU API's
  bool built_in = false;    // compiled into this library
  bool available = false;   // built in, and this machine runs it
  bool chosen_by_auto = false;  // what `auto` runs here (OpenSSL still runs what it lacks)
  bool gpu = false;         // runs AES on a device (its raw modes only; the sealed format stays on the CPU)
  std::string runs;         // what it runs ("every mode", "ECB, CTR, CBC and CFB128 decryption")
  std::string auto_rule;    // how auto ranks it ("first where its VAES code runs", "where measured faster")
  std::string detail;       // version and code path ("1.3.0, avx512 with VAES, VPCLMULQDQ")
  std::string versions;     // a GPU API's runtime and driver ("runtime 13.0, driver 12.8")
  std::vector<GpuDeviceInfo> devices;  // a GPU backend's devices
  std::string why_not;      // why it is not available
};

// Every backend paes knows, built in or not, in order of preference. Lists
// the GPU backends' devices, which starts their drivers.
std::vector<CipherBackendInfo> cipher_backends_info();

// The same names, cheaply (no driver starts): for a command line's choices.
struct CipherBackendName {
  std::string name;
  bool gpu = false;
  bool built_in = false;
};
std::vector<CipherBackendName> cipher_backend_names();

// How many devices GPU backend `name` lists here (their indices are
// BackendChoice::device): 0 for a backend that is no GPU of this build, or
// whose driver or device this machine lacks. Starts its driver.
unsigned cipher_device_count(std::string_view name);

// The backend a job made now under `choice` would run, before auto's GPU
// verdict (a job of known length may yet go to a GPU under
// gpu_where_faster): for a raw mode's direction, and for the sealed
// format's segments. Throws like check_backend_choice.
std::string raw_backend_name(const BackendChoice& choice, Mode mode, Direction direction);
std::string segment_backend_name(const BackendChoice& choice);
// The chunk length the backend `choice` resolves to asks its raw jobs for (a
// GPU: one launch's bytes), for ChunkPlan::decide_chunk_len; 0 where it
// leaves it to the job.
std::uint64_t backend_chunk_len(const BackendChoice& choice, Mode mode, Direction direction);
// Whether backend `name` (built in) runs this raw mode and direction itself
// (a GPU: ECB, CTR, CBC and CFB128 decryption); false for one not built in.
bool backend_runs(std::string_view name, Mode mode, Direction direction);

// Caller memory that a GPU backend page-locked (pin_memory), so that its
// device copies straight from and into it; unpinned when the handle goes.
// Move-only. Empty (pinned() false) where the device can't pin.
class PinnedMemory {
 public:
  PinnedMemory() = default;
  explicit PinnedMemory(std::function<void()> release) : release_(std::move(release)) {}
  ~PinnedMemory() { reset(); }
  PinnedMemory(PinnedMemory&& other) noexcept : release_(std::exchange(other.release_, nullptr)) {}
  PinnedMemory& operator=(PinnedMemory&& other) noexcept {
    if (this != &other) {
      reset();
      release_ = std::exchange(other.release_, nullptr);
    }
    return *this;
  }
  PinnedMemory(const PinnedMemory&) = delete;
  PinnedMemory& operator=(const PinnedMemory&) = delete;
  bool pinned() const { return static_cast<bool>(release_); }
  // Unpins now.
  void reset() noexcept {
    if (release_) std::exchange(release_, nullptr)();
  }

 private:
  std::function<void()> release_;
};

// Page-locks [data, data + len) for the GPU backend `backend` names (on its
// device) while the handle lives: jobs on that backend and device then move
// chunks lying in it straight between it and the device, with no staging
// copy. Pinning costs time in proportion to `len`: it pays for memory that
// goes through the device many times. Empty where the device can't pin
// memory it didn't allocate. Throws a usage Error for a backend that is no
// GPU or not built in, and what opening its device throws.
PinnedMemory pin_memory(const BackendChoice& backend, const void* data, std::size_t len);

// How a GPU backend's kernels are launched: threads per block or work-group
// size, and the 16-byte blocks each thread transforms.
// 0: the backend's default.
struct GpuGeometry {
  unsigned group_size = 0;
  unsigned blocks_per_item = 0;
};

// A GPU backend's device opened on its own, apart from any job's backend, for `paes bench` and bench/gpu/: the kernels timed alone, the
// page-locked link, and the threads engine in memory on it. Each probe opens
// its own device (its own lanes, batch size and launch geometry).
class GpuProbe {
 public:
  virtual ~GpuProbe() = default;
  // The device's name, for reports.
  virtual std::string device() const = 0;
  // What the page-locked link moves, bytes per second, on `bytes` each way:
  // up alone, down alone, and each way while both run. The best of `repeats`.
  struct LinkRates {
    double up = 0;
    double down = 0;
    double both = 0;
  };
  virtual LinkRates measure_link(std::size_t bytes, unsigned repeats) = 0;
  // Seconds the kernel of `spec` takes alone on `bytes` already on the
  // device, by the device's own events: no transfers. The best of `repeats`.
  virtual double kernel_only_seconds(const CipherSpec& spec, std::size_t bytes, unsigned repeats) = 0;
  // The threads engine with `threads` workers over memory on this device, in
  // chunks of the probe's batch: what transform_memory does on the backend.
  // `out` holds in.size() + 16 bytes. Returns the bytes written.
  virtual std::uint64_t transform(const CipherSpec& spec, std::span<std::uint8_t> out,
                                  std::span<const std::uint8_t> in, unsigned threads) = 0;
  // Page-locks memory for this probe's device, as pin_memory does.
  virtual PinnedMemory pin_memory(const void* data, std::size_t len) = 0;
};

// Opens `name`'s device `device` (unset: its default) for a probe whose
// batches are `batch_bytes`, launched with `geometry`, and self-tests it.
// Throws a usage Error for a backend that is no GPU of this build, or a
// geometry the device refuses, and what opening the device throws.
std::unique_ptr<GpuProbe> open_gpu_probe(std::string_view name, std::optional<unsigned> device,
                                         std::size_t batch_bytes, const GpuGeometry& geometry = {});

// Auto's GPU policy (BackendChoice::gpu_where_faster). The least input auto
// considers running on a GPU: below it, starting a device costs more than it
// could save.
inline constexpr std::uint64_t kAutoGpuMinBytes = std::uint64_t{256} << 20;

// What auto measured and kept on this machine as it is now (its CPU and GPU
// stack: docs/GPU.md), one entry per kind of job, for `paes info`. Reads the
// cache only: starts no driver.
struct AutoVerdict {
  std::string job;          // e.g. "ctr encrypt AES-128, 16 threads, ipsec-mb"
  std::string gpu_backend;  // its name; empty where auto found no GPU
  std::string device;       // the GPU's name
  double gpu_bytes_per_s = 0;    // the threads engine on the GPU backend, in memory, with its transfers
  double cpu_bytes_per_s = 0;    // the threads engine on the CPU's backend
  double gpu_start_seconds = 0;  // finding, starting and self-testing the GPU
  std::optional<std::uint64_t> gpu_from_bytes;  // the least input auto runs on the GPU; none: never
};
std::vector<AutoVerdict> kept_auto_verdicts();
// The file auto keeps them in; empty where there is no home for it.
std::string auto_rate_cache_path();

}  // namespace paes
