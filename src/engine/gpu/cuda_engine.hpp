// AES on a CUDA device: the parallel directions of the raw modes (ECB both
// ways, CTR both ways, CBC and CFB128 decryption) over memory buffers, with the
// kernels of src/gpu/kernels.cu (the same AES core as the OpenCL engine) and
// host-side key expansion and PKCS#7 padding.
//
// The class has the shape of OpenClEngine (engine/gpu/opencl_engine.hpp), so the
// CLI and the benchmarks treat the two alike: begin() with the chunk's start
// state from the plan, then update() pieces, the last one `final`. The output
// is byte-identical to OpenSSL's for the same spec.
//
// A piece goes through the device in batches, each on its own CUDA stream in
// turn: copy into a pinned staging buffer, cudaMemcpyAsync up, kernel,
// cudaMemcpyAsync down. With `streams` batches in flight, the upload of one
// batch, the kernel of another and the download of a third run at the same
// time (GPUs have separate copy engines for each direction), and the host's
// staging copies overlap all three.
//
// This header does not include the CUDA headers; users of the class need
// neither them nor the toolkit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "paes/mode.hpp"

namespace paes {

// One CUDA device as `paes info` lists it; --device takes `index`.
struct CudaDeviceInfo {
  unsigned index = 0;
  std::string name;
  int compute_major = 0;  // compute capability, e.g. 9.0 for H100
  int compute_minor = 0;
  unsigned multiprocessors = 0;
  std::uint64_t global_mem_bytes = 0;
  std::uint64_t shared_mem_per_block_bytes = 0;
  unsigned memory_bus_bits = 0;
  std::string pci_bus_id;  // "0000:65:00.0"
};

// Every CUDA device; empty when there is none, or no driver, or the driver is
// older than the runtime paes was built with (cudaGetDeviceCount fails).
// Throws Error only on a failing CUDA call past that.
std::vector<CudaDeviceInfo> list_cuda_devices();

// Versions as "runtime 13.0, driver 12.8" ("driver none" without a driver),
// for `paes info`.
std::string cuda_version_string();

struct CudaOptions {
  // Index from list_cuda_devices(); unset: device 0.
  std::optional<unsigned> device_index;
  // Bytes per batch. `streams` batches are in flight, each on its own stream;
  // host memory is one pinned buffer of this size per stream, device memory
  // two (input and output).
  std::size_t batch_bytes = std::size_t{16} << 20;
  // CUDA streams, and so batches in flight; at least 2. Three let upload,
  // kernel and download of three batches overlap.
  unsigned streams = 3;
  // 16-byte blocks each thread transforms (the grid is about
  // batch blocks / blocks_per_thread threads).
  unsigned blocks_per_thread = 8;
  // Threads per thread block, a multiple of 32 up to 1024.
  unsigned threads_per_block = 256;
  // Time kernels and transfers with CUDA events (stats()).
  bool profile = false;
};

class CudaEngine {
 public:
  // Picks the device, allocates streams and buffers and runs the AES
  // self-test on the device (engine/gpu/gpu_check.hpp). Throws Error
  // "CUDA: no CUDA device ..." when there is none (or no usable driver),
  // a usage Error for a device index that doesn't exist or bad options,
  // Error when the device fails the self-test, and Error with
  // cudaGetErrorString's text when a CUDA call fails.
  explicit CudaEngine(const CudaOptions& options = {});
  ~CudaEngine();
  CudaEngine(const CudaEngine&) = delete;
  CudaEngine& operator=(const CudaEngine&) = delete;

  const CudaDeviceInfo& device() const;

  // Whether a spec's mode and direction run on the device: ECB, CTR, and the
  // decryption of CBC and CFB128. The others are sequential (or, for CFB8 and
  // CFB1, not worth a device) and belong to the CPU.
  static bool supports(const CipherSpec& spec);

  // Starts a message, or a chunk of one, under `spec` (which need not outlive
  // the call: the round keys are expanded here and travel with each launch).
  // start_state is what ChunkPlan::start_state gives: the counter block of
  // the first block (CTR), the ciphertext block before it (CBC, CFB128: the
  // IV for the first chunk); ignored for ECB. Throws a usage Error for an
  // unsupported spec.
  void begin(const CipherSpec& spec, const Block& start_state);

  // Transforms the next `len` bytes of the chunk into `out`, which may equal
  // `in`. Pieces before the final one must be whole blocks. On the final
  // piece a padded (ECB/CBC) spec encrypts with the PKCS#7 block appended
  // (`out` must hold len + 16 bytes) or decrypts, checks and strips it. The
  // work is done when the call returns. Returns the bytes written.
  // Three blocks of every batch are recomputed with OpenSSL on the CPU
  // (engine/gpu/gpu_check.hpp); a mismatch throws Error, and `out` must then be
  // discarded. Throws Error on bad padding ("bad decrypt: wrong key or
  // corrupted data") or on a length the spec can't take, and on any CUDA failure.
  std::size_t update(std::uint8_t* out, const std::uint8_t* in, std::size_t len, bool final);

  // A whole message at once: begin(spec, spec.iv) and one final update.
  // `out` must hold len + 16 bytes.
  std::size_t transform(const CipherSpec& spec, std::uint8_t* out, const std::uint8_t* in,
                        std::size_t len);

  // Accumulated since construction or reset_stats(); the times are filled
  // only with CudaOptions::profile.
  struct Stats {
    std::uint64_t bytes = 0;    // bytes through the kernels
    std::uint64_t batches = 0;  // kernel launches
    std::uint64_t checked_batches = 0;  // batches whose sampled blocks matched OpenSSL
    double kernel_seconds = 0;  // device time in kernels
    double write_seconds = 0;   // device time copying host -> device
    double read_seconds = 0;    // device time copying device -> host
  };
  const Stats& stats() const;
  void reset_stats();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace paes
