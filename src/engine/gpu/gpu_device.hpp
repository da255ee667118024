// What differs between GPU APIs, behind one small interface. The driver
// (gpu_driver.hpp) holds everything else once: batching, chaining, padding,
// the output checks, stats and the ring of batches in flight. CUDA
// (cuda_engine.cpp), OpenCL (opencl_engine.cpp) and the host adapter
// (host_engine.cpp, the same kernel bodies on CPU threads, so that CI runs
// the driver under ASan and TSan without a GPU) implement it.
//
// A device has `lanes`: each one batch in flight, with its own queue or
// stream, a page-locked host buffer and device input and output buffers. A
// batch is staged into its lane's host buffer, enqueue() copies it up, runs
// the kernel and copies the result back into the same host buffer, and
// wait() returns once that is done. Where the caller's own memory was pinned
// (pin_host), enqueue() copies straight from and into it instead, with no
// staging copy on the CPU.
//
// Threads: the driver calls enqueue() on one thread and wait() on another,
// always on different lanes at once; a lane is only ever used by one thread
// at a time. set_keys() and open_lanes() are called with nothing in flight.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "gpu/gpu_modes.hpp"
#include "cipher/gpu/key_schedule.hpp"
#include "paes/engine.hpp"

namespace paes::gpu {

// One batch's kernel launch: its kernel, its length (only CTR and CFB128 may
// end in a partial block), the index of its first block in the message (CTR),
// and `state`: big-endian words, the CTR counter of the message's block 0 or,
// for CBC and CFB128, the ciphertext block before the batch.
struct Launch {
  Kernel kernel = Kernel::ctr;
  std::size_t bytes = 0;
  std::uint64_t first_block = 0;
  std::array<std::uint32_t, 4> state{};
};

// Device time of one batch, measured with the device's own events when the
// lanes were opened with profiling (zero otherwise).
struct LaneTimes {
  double upload = 0;
  double kernel = 0;
  double download = 0;
};

// What the page-locked link moves, in bytes per second: each way alone, and
// each way while both run at once (as `paes bench` reports it).
using LinkRates = GpuBackend::LinkRates;

class Device {
 public:
  virtual ~Device() = default;
  // "CUDA device 0 (NVIDIA H100 80GB HBM3)", for messages.
  virtual std::string label() const = 0;
  // The largest batch one device allocation may hold.
  virtual std::size_t max_batch_bytes() const { return std::numeric_limits<std::size_t>::max(); }
  // Allocates `count` lanes of `batch_bytes` each (again: the old ones go).
  virtual void open_lanes(unsigned count, std::size_t batch_bytes, bool profile) = 0;
  virtual std::uint8_t* host_buffer(unsigned lane) = 0;
  // The round keys of the launches to come (encryption or equivalent-inverse,
  // as the kernel needs). Key material: devices wipe their copies.
  virtual void set_keys(const RoundKeys& keys) = 0;
  // Enqueues the upload of launch.bytes from `from`, the kernel, and the
  // download of its result into `to`, on the lane's queue, and returns at
  // once. `from` and `to` are the lane's host buffer, or memory pin_host()
  // pinned (then `to` may equal `from`); neither may be touched until wait().
  // Throws Error when the API call fails.
  virtual void enqueue(unsigned lane, const Launch& launch, const std::uint8_t* from, std::uint8_t* to) = 0;
  // Waits for the lane's batch. Throws Error when it failed.
  virtual LaneTimes wait(unsigned lane) = 0;
  // Waits for every lane, ignoring errors: after a failure, and before
  // buffers go.
  virtual void drain_quietly() noexcept = 0;

  // Page-locks the caller's memory [data, data + len) for DMA (CUDA:
  // cudaHostRegister), so that enqueue() may copy straight from and into it;
  // false where the device can't (OpenCL) or the call fails, and batches
  // are then staged. CUDA also fails it for memory that overlaps a
  // registration (cudaHostAlloc memory, the caller's own, an earlier pin),
  // wholly or in part: one copy may not span registered and unregistered
  // memory, and the extent of a registration it didn't make is unknown.
  virtual bool pin_host(const void* /*data*/, std::size_t /*len*/) { return false; }
  // Undoes a pin_host() that returned true, with nothing in flight.
  virtual void unpin_host(const void* /*data*/) noexcept {}

  // Measurements for `paes bench --engine` (bench/gpu/), with buffers of
  // their own of `bytes` each; the best of `repeats`. The link: page-locked
  // host memory to the device and back, alone and both ways at once. The
  // kernel: launch.bytes on buffers already on the device, timed with the
  // device's events, under the keys last set.
  virtual LinkRates measure_link(std::size_t bytes, unsigned repeats) = 0;
  virtual double kernel_seconds(const Launch& launch, unsigned repeats) = 0;
};

}  // namespace paes::gpu
