// The GPU driver on the host: a gpu::Device whose "kernels" are the GPU
// kernel bodies (src/gpu/host_kernels.hpp) run by one CPU thread per lane,
// with a page-locked-like host buffer and separate device input and output
// buffers per lane, as a GPU has. It exists for tests: CI runs the whole
// driver (batching, chaining, padding, checks, the pipeline's threads) under
// ASan and TSan without a GPU, and a hook lets a test play a faulty device.
// It is no engine a user picks: a GPU's AES on the CPU is far slower than
// the threads engine's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "engine/gpu/gpu_driver.hpp"

namespace paes {

struct HostGpuOptions : GpuDriverOptions {
  HostGpuOptions() { batch_bytes = std::size_t{1} << 20; }  // the CPU is slow at GPU AES
  // Called on each batch's device output before it is copied back, from the
  // lane's thread: a test corrupts it to play a device that computes wrongly.
  std::function<void(std::uint8_t* out, std::size_t n)> after_kernel;
};

class HostGpuEngine final : public GpuDriver {
 public:
  explicit HostGpuEngine(const HostGpuOptions& options = {});
};

}  // namespace paes
