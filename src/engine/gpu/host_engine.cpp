#include "engine/gpu/host_engine.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "cipher/gpu/aes_tables.hpp"
#include "cipher/gpu/host_kernels.hpp"
#include "paes/error.hpp"
#include "util/elapsed.hpp"

namespace paes {

namespace {

// The host as a gpu::Device: each lane is a thread that, for each enqueued
// batch, copies it "up" into its input buffer, runs the kernel into its
// output buffer and copies that back "down", as a stream would.
class HostDevice final : public gpu::Device {
 public:
  explicit HostDevice(HostGpuOptions options) : options_(std::move(options)) {}
  ~HostDevice() override { close_lanes(); }

  std::string label() const override { return "host GPU adapter"; }

  void open_lanes(unsigned count, std::size_t batch_bytes, bool profile) override {
    close_lanes();
    profile_ = profile;
    lanes_.clear();
    for (unsigned i = 0; i < count; ++i) {
      auto lane = std::make_unique<Lane>();
      lane->host.resize(batch_bytes);
      lane->dev_in.resize(batch_bytes);
      lane->dev_out.resize(batch_bytes);
      lanes_.push_back(std::move(lane));
    }
    for (auto& lane : lanes_) lane->worker = std::thread([this, l = lane.get()] { serve(*l); });
  }

  std::uint8_t* host_buffer(unsigned lane) override { return lanes_[lane]->host.data(); }

  void set_keys(const gpu::RoundKeys& keys) override { keys_ = keys; }

  void enqueue(unsigned l, const gpu::Launch& launch, const std::uint8_t* from, std::uint8_t* to) override {
    Lane& lane = *lanes_[l];
    check_copy(lane, from, launch.bytes);
    check_copy(lane, to, launch.bytes);
    {
      const std::lock_guard lock(lane.mutex);
      if (lane.queued) throw Error("host GPU adapter: a lane was enqueued twice");
      lane.launch = launch;
      lane.from = from;
      lane.to = to;
      lane.queued = true;
      lane.done = false;
    }
    lane.changed.notify_all();
  }

  // Host memory needs no pinning: any of it may stand for pinned memory, so
  // that the driver's path straight from and into the caller's memory runs
  // here too (the lane's thread then copies from and into it as DMA would).
  // The registrations follow CUDA's rules, so that the driver is tested
  // against them: memory overlapping a registration is refused, and a copy
  // may not span registered and unregistered memory (check_copy).
  bool pin_host(const void* data, std::size_t len) override {
    const std::uintptr_t begin = address(data);
    const std::lock_guard lock(registered_mutex_);
    for (const auto& [b, e] : registered_) {
      if (begin < e && b < begin + len) return false;
    }
    registered_.emplace_back(begin, begin + len);
    return true;
  }
  void unpin_host(const void* data) noexcept override {
    const std::lock_guard lock(registered_mutex_);
    std::erase_if(registered_, [&](const auto& r) { return r.first == address(data); });
  }

  gpu::LaneTimes wait(unsigned l) override {
    Lane& lane = *lanes_[l];
    std::unique_lock lock(lane.mutex);
    lane.changed.wait(lock, [&] { return lane.done || !lane.queued; });
    if (lane.error) std::rethrow_exception(std::exchange(lane.error, nullptr));
    return lane.times;
  }

  // The "link" is memcpy, the kernel the bodies on this thread: figures of
  // the host, for the benchmark's tests rather than for comparison.
  gpu::LinkRates measure_link(std::size_t bytes, unsigned repeats) override {
    std::vector<std::uint8_t> host(bytes, 0xa5), device(bytes);
    double best = 0;
    for (unsigned r = 0; r < repeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      std::memcpy(device.data(), host.data(), bytes);
      const double seconds = seconds_since(start);
      if (seconds > 0) best = std::max(best, static_cast<double>(bytes) / seconds);
    }
    return {best, best, best / 2};
  }

  double kernel_seconds(const gpu::Launch& launch, unsigned repeats) override {
    std::vector<std::uint8_t> in(launch.bytes, 0x5a), out(launch.bytes);
    double best = 0;
    for (unsigned r = 0; r < repeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      gpu::run_host_kernel(launch.kernel, in.data(), out.data(), launch.bytes, launch.first_block,
                           launch.state.data(), keys_.words.data(), keys_.rounds, gpu::aes_tables().image.data(), 0,
                           (launch.bytes + kBlockLen - 1) / kBlockLen);
      const double seconds = seconds_since(start);
      if (r == 0 || seconds < best) best = seconds;
    }
    return best;
  }

  void drain_quietly() noexcept override {
    for (auto& lane : lanes_) {
      std::unique_lock lock(lane->mutex);
      lane->changed.wait(lock, [&] { return lane->done || !lane->queued; });
      lane->error = nullptr;
    }
  }

 private:
  static std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

  struct Lane {
    std::vector<std::uint8_t> host, dev_in, dev_out;
    std::thread worker;
    std::mutex mutex;
    std::condition_variable changed;
    bool queued = false;  // a batch was enqueued and not yet waited for
    bool done = false;    // ... and it is finished
    bool closing = false;
    gpu::Launch launch;
    const std::uint8_t* from = nullptr;  // where the enqueued batch is copied up from
    std::uint8_t* to = nullptr;          // ... and its result down into
    gpu::LaneTimes times;
    std::exception_ptr error;
  };

  void serve(Lane& lane) {
    for (;;) {
      gpu::Launch launch;
      const std::uint8_t* from = nullptr;
      std::uint8_t* to = nullptr;
      {
        std::unique_lock lock(lane.mutex);
        lane.changed.wait(lock, [&] { return lane.closing || (lane.queued && !lane.done); });
        if (lane.closing) return;
        launch = lane.launch;
        from = lane.from;
        to = lane.to;
      }
      gpu::LaneTimes times;
      std::exception_ptr error;
      try {
        const auto start = std::chrono::steady_clock::now();
        std::memcpy(lane.dev_in.data(), from, launch.bytes);
        times.upload = seconds_since(start);
        const auto kernel_start = std::chrono::steady_clock::now();
        gpu::run_host_kernel(launch.kernel, lane.dev_in.data(), lane.dev_out.data(), launch.bytes, launch.first_block,
                             launch.state.data(), keys_.words.data(), keys_.rounds, gpu::aes_tables().image.data(), 0,
                             (launch.bytes + kBlockLen - 1) / kBlockLen);
        if (options_.after_kernel) options_.after_kernel(lane.dev_out.data(), launch.bytes);
        times.kernel = seconds_since(kernel_start);
        const auto download_start = std::chrono::steady_clock::now();
        std::memcpy(to, lane.dev_out.data(), launch.bytes);
        times.download = seconds_since(download_start);
      } catch (...) {
        error = std::current_exception();
      }
      {
        const std::lock_guard lock(lane.mutex);
        lane.times = profile_ ? times : gpu::LaneTimes{};
        lane.error = error;
        lane.done = true;
        lane.queued = false;
      }
      lane.changed.notify_all();
    }
  }

  void close_lanes() noexcept {
    for (auto& lane : lanes_) {
      {
        const std::lock_guard lock(lane->mutex);
        lane->closing = true;
      }
      lane->changed.notify_all();
      if (lane->worker.joinable()) lane->worker.join();
    }
    lanes_.clear();
  }

  // A direct copy of n bytes at `p` (not the lane's buffer) must lie wholly
  // inside one registration or wholly outside all of them, as cudaMemcpyAsync
  // requires (outside: pageable memory, which CUDA copies too, synchronously).
  void check_copy(const Lane& lane, const std::uint8_t* p, std::size_t n) {
    if (p == lane.host.data() || n == 0) return;
    const std::uintptr_t begin = address(p);
    const std::lock_guard lock(registered_mutex_);
    for (const auto& [b, e] : registered_) {
      const bool inside = b <= begin && begin < e && n <= e - begin;
      if (!inside && begin < e && b < begin + n) {
        throw Error("host GPU adapter: a copy spans registered and unregistered memory (CUDA refuses it)");
      }
    }
  }

  HostGpuOptions options_;
  std::mutex registered_mutex_;  // pin_host may run beside the lanes' enqueues
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> registered_;  // [begin, end) pinned
  std::vector<std::unique_ptr<Lane>> lanes_;
  bool profile_ = false;
  gpu::RoundKeys keys_;  // wiped on destruction
};

}  // namespace

HostGpuEngine::HostGpuEngine(const HostGpuOptions& options)
    : GpuDriver(std::make_unique<HostDevice>(options), options) {}

}  // namespace paes
