// A model GPU for tests, on a simulated clock: what the GPU cipher backend
// and the engines' workers do to a device's throughput, measured without a
// GPU and without the wall clock, so the figures are the same on every run,
// under ASan and TSan too. Test-only: no backend table lists it.
//
// The device has three first-in-first-out engines, upload, kernel and
// download, each moving bytes at its own rate. A batch enqueued at simulated
// time t uploads from max(t, upload engine free), runs its kernel from
// max(upload end, kernel engine free) and downloads from max(kernel end,
// download engine free); it is done at its download's end. Batches enqueued
// at the same simulated time take the engines in the order their lanes were
// opened, never in the order their threads happened to run.
//
// The clock moves only when every lane in use waits: it then jumps to the
// earliest completion among the waiting lanes and wakes those. A lane is in
// use from open_lane() (so that an engine that opens or takes all its lanes
// before any enqueue runs the same schedule every time) and from taken(),
// until returned() or its destruction; lanes not in use never hold the clock.
// A lane in use that never waits would stop it for good: after `stall_limit`
// of real time with the clock stuck while a lane waits, and no lane
// computing a batch's bytes, that wait throws Error rather than move the
// clock on its own (which would make the figures depend on timing).
//
// The bytes are real: enqueue() runs the host kernel bodies
// (support/host_kernels.hpp) from `from` into the lane's own device
// buffers and back into `to`, which must be the lane's host buffer or
// memory from allocate_pinned().
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cipher/gpu/device.hpp"

namespace paes::test {

// Bytes per simulated second of each engine.
struct ModelRates {
  double upload = 0;
  double kernel = 0;
  double download = 0;
};

// The device's totals since it opened.
struct ModelFigures {
  double now = 0;  // simulated seconds
  double upload_busy = 0;
  double kernel_busy = 0;
  double download_busy = 0;
  std::uint64_t batches = 0;
  std::uint64_t bytes = 0;
  // The most lanes whose batches were under way at one time (from upload
  // start to download end).
  unsigned max_lanes_in_flight = 0;
  // Batches whose upload ran while another lane's kernel or download ran:
  // the overlap of transfers and compute that more lanes are there to give.
  std::uint64_t overlapped_uploads = 0;
};

class ModelLane;

// The clock and the engines, shared by the device and its lanes and kept by
// a test after the device went into a backend (ModelDevice::clock()).
class ModelClock {
 public:
  ModelClock(const ModelRates& rates, std::chrono::milliseconds stall_limit);

  double now() const;
  ModelFigures figures() const;

 private:
  friend class ModelLane;

  struct Span {
    double begin = 0;
    double end = 0;
  };
  struct Batch {
    Span upload, kernel, download;
  };
  struct LaneState {
    unsigned id = 0;  // the order of opening: ties in simulated time go by it
    bool in_use = true;
    bool waiting = false;
    bool submitted = false;  // enqueued, not yet on the engines
    bool in_flight = false;  // enqueued, not yet waited for
    double submit_time = 0;
    std::size_t bytes = 0;
    Batch batch;  // the latest scheduled
    bool scheduled_once = false;
  };

  // Called with mutex_ held.
  bool clock_held() const;
  void schedule_submitted();
  void advance_if_free();
  void schedule(LaneState& lane);

  // From the lanes.
  LaneState* add_lane();
  void remove_lane(LaneState* lane);
  void set_in_use(LaneState* lane, bool in_use);
  // Around enqueue()'s AES, which counts as progress for the stall limit
  // (slow under the sanitizers); end_compute() only where it throws.
  void begin_compute();
  void end_compute();
  void submit(LaneState* lane, std::size_t bytes);
  gpu::LaneTimes wait(LaneState* lane);
  void abandon(LaneState* lane);
  std::string stalled_message() const;

  const ModelRates rates_;
  const std::chrono::milliseconds stall_limit_;
  mutable std::mutex mutex_;
  std::condition_variable advanced_;
  // Real time the clock last moved or a lane last finished computing.
  std::chrono::steady_clock::time_point last_progress_;
  unsigned computing_ = 0;
  unsigned next_id_ = 0;
  std::vector<std::unique_ptr<LaneState>> lanes_;
  double upload_free_ = 0, kernel_free_ = 0, download_free_ = 0;
  ModelFigures figures_;
};

class ModelDevice final : public gpu::Device {
 public:
  explicit ModelDevice(const ModelRates& rates, std::chrono::milliseconds stall_limit = std::chrono::seconds(5));
  ~ModelDevice() override;
  ModelDevice(const ModelDevice&) = delete;
  ModelDevice& operator=(const ModelDevice&) = delete;

  std::shared_ptr<const ModelClock> clock() const { return clock_; }

  std::string label() const override;
  std::unique_ptr<gpu::Lane> open_lane(std::size_t batch_bytes, bool profile) override;
  void* allocate_pinned(std::size_t bytes) override;
  void free_pinned(void* data) noexcept override;
  // The set rates, as a measurement would find them: the engines run apart,
  // so each way keeps its rate while both run. Neither moves the clock.
  gpu::LinkRates measure_link(std::size_t bytes, unsigned repeats) override;
  double kernel_seconds(const gpu::Launch& launch, const gpu::RoundKeys& keys, unsigned repeats) override;

  // Whether [data, data + len) lies in one allocate_pinned() block.
  bool in_pinned(const void* data, std::size_t len) const;

 private:
  const ModelRates rates_;
  std::shared_ptr<ModelClock> clock_;
  mutable std::mutex pinned_mutex_;
  struct Pinned {
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;
  };
  std::vector<Pinned> pinned_;
};

}  // namespace paes::test
