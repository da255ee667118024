// The host as a GPU device: each lane is a CPU thread that runs the kernel
// bodies (host_kernels.hpp) between input and output buffers of its own, as a
// stream would between device buffers. It exists for tests: CI runs the GPU
// cipher backend (its lanes on the engines' workers, chaining, checks, the
// pools of lanes and page-locked memory) under ASan and TSan without a GPU,
// and a hook lets a test play a faulty device. No user picks it: a GPU's AES
// on the CPU is far slower than the CPU backends.
//
// Host memory stands for page-locked memory: allocate_pinned gives ordinary
// aligned memory and pin_host registers any, under the strictest API's rules (a
// registration may not overlap another), so that the backend's direct path
// runs here too. enqueue() refuses what a GPU could not copy by DMA: memory
// outside the lane's buffer, the allocations and the registrations, and a
// copy spanning registered and unregistered memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "cipher/gpu/device.hpp"

namespace paes::gpu {

struct HostDeviceOptions {
  // Called on each batch's device output before it is copied back, from the
  // lane's thread: a test corrupts it to play a device that computes wrongly.
  std::function<void(std::uint8_t* out, std::size_t n)> after_kernel;
};

std::unique_ptr<Device> open_host_device(HostDeviceOptions options = {});

}  // namespace paes::gpu
