// AES on an OpenCL device: the parallel directions of the raw modes (ECB both
// ways, CTR both ways, CBC and CFB128 decryption) over memory buffers, with the
// kernels of src/gpu/ and host-side key expansion and PKCS#7 padding.
//
// The contract mirrors ChunkCipher (paes/cipher.hpp) so that an engine can
// hand it a chunk the way it hands one to OpenSSL: begin() with the chunk's
// start state from the plan, then update() pieces, the last one `final`. The
// output is byte-identical to OpenSSL's for the same spec.
//
// This header does not include the OpenCL headers; users of the class need
// neither them nor the ICD loader's declarations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "paes/mode.hpp"

namespace paes {

// One OpenCL device as `paes info` lists it. `index` counts devices over all
// platforms in the order the ICD loader reports them; --device takes it.
struct OpenClDeviceInfo {
  unsigned index = 0;
  std::string platform;
  std::string name;
  std::string vendor;
  std::string version;  // CL_DEVICE_VERSION, e.g. "OpenCL 3.0 PoCL ..."
  std::string type;     // "gpu", "cpu", "accelerator" or "other"
  unsigned compute_units = 0;
  std::uint64_t global_mem_bytes = 0;
  std::uint64_t local_mem_bytes = 0;
  std::size_t max_work_group_size = 0;
};

// Every device of every platform; empty when there is no OpenCL platform (no
// ICD installed). Throws Error only on a failing OpenCL call past that.
std::vector<OpenClDeviceInfo> list_opencl_devices();

// The symbolic name of an OpenCL error code ("CL_OUT_OF_RESOURCES").
std::string opencl_error_name(int code);

struct OpenClOptions {
  // Index from list_opencl_devices(); unset: the first GPU, else the first device.
  std::optional<unsigned> device_index;
  // Bytes per batch. Two batches are in flight, on two queues, so the copy of
  // one overlaps the kernel of the other; host memory is 2 pinned buffers of
  // this size, device memory 4.
  std::size_t batch_bytes = std::size_t{16} << 20;
  // Blocks each work-item transforms (the global size is about
  // batch blocks / blocks_per_item).
  unsigned blocks_per_item = 8;
  // Work-group size; 0: min(256, what the device and kernel allow).
  std::size_t local_size = 0;
  // Time kernels and transfers with OpenCL profiling events (stats()).
  bool profile = false;
};

class OpenClEngine {
 public:
  // Picks the device, builds the program (Error with the build log when that
  // fails), allocates the batch buffers and runs the AES self-test on the
  // device (engine/gpu/gpu_check.hpp). Throws Error when there is no device or
  // it fails the self-test, and a usage Error for a device index that
  // doesn't exist.
  explicit OpenClEngine(const OpenClOptions& options = {});
  ~OpenClEngine();
  OpenClEngine(const OpenClEngine&) = delete;
  OpenClEngine& operator=(const OpenClEngine&) = delete;

  const OpenClDeviceInfo& device() const;

  // Whether a spec's mode and direction run on the device: ECB, CTR, and the
  // decryption of CBC and CFB128. The others are sequential (or, for CFB8 and
  // CFB1, not worth a device) and belong to the CPU.
  static bool supports(const CipherSpec& spec);

  // Starts a message, or a chunk of one, under `spec` (which need not outlive
  // the call: the round keys are expanded and uploaded here). start_state is
  // what ChunkPlan::start_state gives: the counter block of the first block
  // (CTR), the ciphertext block before it (CBC, CFB128: the IV for the first
  // chunk); ignored for ECB. Throws a usage Error for an unsupported spec.
  void begin(const CipherSpec& spec, const Block& start_state);

  // Transforms the next `len` bytes of the chunk into `out`, which may equal
  // `in`. Pieces before the final one must be whole blocks. On the final
  // piece a padded (ECB/CBC) spec encrypts with the PKCS#7 block appended
  // (`out` must hold len + 16 bytes) or decrypts, checks and strips it. The
  // work is done when the call returns. Returns the bytes written.
  // Three blocks of every batch are recomputed with OpenSSL on the CPU
  // (engine/gpu/gpu_check.hpp); a mismatch throws Error, and `out` must then be
  // discarded. Throws Error on bad padding ("bad decrypt: wrong key or
  // corrupted data") or on a length the spec can't take, and on any OpenCL failure.
  std::size_t update(std::uint8_t* out, const std::uint8_t* in, std::size_t len, bool final);

  // A whole message at once: begin(spec, spec.iv) and one final update.
  // `out` must hold len + 16 bytes.
  std::size_t transform(const CipherSpec& spec, std::uint8_t* out, const std::uint8_t* in,
                        std::size_t len);

  // Accumulated since construction or reset_stats(); the times are filled
  // only with OpenClOptions::profile.
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
