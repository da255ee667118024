// What differs between GPU APIs, behind one small interface: a Device and its
// Lanes. The GPU cipher backend (cipher/gpu/gpu_backend.hpp) holds everything
// else once: which kernel runs which mode, chaining between batches, the
// per-batch check on the CPU, the pool of lanes and of page-locked memory.
// Each GPU API's folder beside this one implements it, and so do two test
// devices: the host adapter (tests/support/host_device.hpp: the kernel bodies
// on CPU threads, so that CI runs the backend under ASan and TSan without a
// GPU) and the model device (tests/support/model_device.hpp: a simulated
// clock).
//
// A lane is one worker's way to the device: its own queue or stream, a
// page-locked host buffer and device input and output buffers, opened once
// and reused for every chunk that worker runs. enqueue() copies a batch up,
// runs the kernel and copies the result back, and returns at once; wait()
// blocks (never spins) until that is done. The engines' workers each hold a
// lane, so a device has as many batches in flight as the engine has workers.
//
// Threads: each lane is used by one thread at a time; different lanes are
// used from different threads at once, so everything a lane touches is its
// own (its own kernel objects where an API's kernel arguments are not
// thread-safe; the device made current on the calling thread where an API
// keeps a current device per thread). Every
// lane is closed before its device.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "cipher/gpu/kernel.hpp"
#include "cipher/gpu/key_schedule.hpp"
#include "paes/mode.hpp"
#include "paes/error.hpp"

namespace paes::gpu {

// One batch's kernel launch: its kernel, its length (only CTR and CFB128 may
// end in a partial block), the index of its first block counted from `state`
// (CTR), and `state`: big-endian words, the CTR counter of block 0 or, for
// CBC and CFB128, the ciphertext block before the batch.
struct Launch {
  Kernel kernel = Kernel::ctr;
  std::size_t bytes = 0;
  std::uint64_t first_block = 0;
  std::array<std::uint32_t, 4> state{};
};

// A block as Launch::state's big-endian words.
std::array<std::uint32_t, 4> state_words(const Block& block);

// Device time of one batch, measured with the device's own events when the
// lane was opened with profiling (zero otherwise).
struct LaneTimes {
  double upload = 0;
  double kernel = 0;
  double download = 0;
};

// What the page-locked link moves, in bytes per second: each way alone, and
// each way while both run at once.
struct LinkRates {
  double up = 0;
  double down = 0;
  double both = 0;
};

class Lane {
 public:
  virtual ~Lane() = default;
  // The lane's page-locked host buffer, batch_bytes() long.
  virtual std::uint8_t* host_buffer() = 0;
  virtual std::size_t batch_bytes() const = 0;
  // The round keys of the launches to come (encryption or equivalent-inverse,
  // as the kernel needs), with nothing in flight. Key material: lanes wipe
  // their copies when they close.
  virtual void set_keys(const RoundKeys& keys) = 0;
  // Enqueues the upload of launch.bytes (at most batch_bytes()) from `from`,
  // the kernel, and the download of its result into `to`, and returns at
  // once. `from` and `to` are the lane's host buffer or page-locked memory of
  // the device (Device::allocate_pinned, pin_host); `to` may equal `from`.
  // Neither may be touched until wait(). One batch in flight at a time.
  // Throws Error when the API call fails.
  virtual void enqueue(const Launch& launch, const std::uint8_t* from, std::uint8_t* to) = 0;
  // Blocks until the batch is done. Throws Error when it failed.
  virtual LaneTimes wait() = 0;
  // Waits for the batch in flight, if any, ignoring errors: after a failure,
  // and before buffers go.
  virtual void drain_quietly() noexcept = 0;
  // A worker took the lane from its backend's pool, or gave it back (the
  // model device's clock waits only for the lanes in use).
  virtual void taken() {}
  virtual void returned() {}
};

class Device {
 public:
  virtual ~Device() = default;
  // The API, the device's index and its name, for messages.
  virtual std::string label() const = 0;
  // The largest batch one device allocation may hold.
  virtual std::size_t max_batch_bytes() const { return std::numeric_limits<std::size_t>::max(); }
  // Opens a lane with buffers of `batch_bytes` (at most max_batch_bytes()).
  // Throws Error when the device can't (out of device or page-locked memory).
  virtual std::unique_ptr<Lane> open_lane(std::size_t batch_bytes, bool profile) = 0;

  // Page-locked host memory the device copies from and into by DMA, for the
  // engines' chunk buffers (the API's page-locked allocation, or a mapped
  // CL_MEM_ALLOC_HOST_PTR buffer). Null where the device can't; the caller
  // then uses ordinary memory, staged through a lane's buffer.
  virtual void* allocate_pinned(std::size_t /*bytes*/) { return nullptr; }
  virtual void free_pinned(void* /*data*/) noexcept {}
  // Page-locks the caller's memory [data, data + len) for DMA; false where
  // the API can't pin memory it didn't allocate, or the call fails. It also
  // fails for memory that overlaps a registration: one
  // copy may not span registered and unregistered memory.
  virtual bool pin_host(const void* /*data*/, std::size_t /*len*/) { return false; }
  // Undoes a pin_host() that returned true, with nothing in flight.
  virtual void unpin_host(const void* /*data*/) noexcept {}

  // Measurements for `paes bench` (bench/gpu/), with buffers of their own of
  // `bytes` each; the best of `repeats`. The link: page-locked host memory to
  // the device and back, alone and both ways at once. The kernel:
  // launch.bytes on buffers already on the device, under `keys`, timed with
  // the device's events.
  virtual LinkRates measure_link(std::size_t bytes, unsigned repeats) = 0;
  virtual double kernel_seconds(const Launch& launch, const RoundKeys& keys, unsigned repeats) = 0;
};

// The usage Error for device `index` where the API (its label) lists
// `count` devices, numbered from 0.
Error no_such_device(const char* api, unsigned index, std::size_t count);

}  // namespace paes::gpu
