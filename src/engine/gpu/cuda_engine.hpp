// AES on a CUDA device: the CUDA adapter of the GPU driver
// (engine/gpu/gpu_driver.hpp), which does the batching, chaining, padding,
// checks and the pipeline of batches in flight for every device. Here: the
// device, its streams and buffers, and the kernels of src/gpu/kernels.cu.
//
// Each lane has its own CUDA stream, a pinned host buffer and device input
// and output buffers: upload, kernel and download of one batch are queued on
// its stream, so that batches on different lanes overlap (GPUs have a copy
// engine for each direction).
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

#include "engine/gpu/gpu_driver.hpp"
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

// The driver's options (batch bytes, lanes: one CUDA stream each, with a
// pinned host buffer and two device buffers; profile: CUDA events), and the
// device's own.
struct CudaOptions : GpuDriverOptions {
  // Index from list_cuda_devices(); unset: device 0.
  std::optional<unsigned> device_index;
  // 16-byte blocks each thread transforms (the grid is about
  // batch blocks / blocks_per_thread threads).
  unsigned blocks_per_thread = 8;
  // Threads per thread block, a multiple of 32 up to 1024.
  unsigned threads_per_block = 256;
};

// The driver on a CUDA device. Constructing it picks the device, allocates
// streams and buffers and runs the AES self-test there. Throws Error
// "CUDA: no CUDA device ..." when there is none (or no usable driver), a
// usage Error for a device index that doesn't exist or bad options, Error
// when the device fails the self-test, and Error with cudaGetErrorString's
// text when a CUDA call fails.
class CudaEngine final : public GpuDriver {
 public:
  explicit CudaEngine(const CudaOptions& options = {});
  const CudaDeviceInfo& device() const;
};

}  // namespace paes
