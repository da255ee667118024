#include "support/host_device.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cipher/gpu/aes_tables.hpp"
#include "paes/error.hpp"
#include "paes/mode.hpp"
#include "support/host_kernels.hpp"
#include "util/elapsed.hpp"

namespace paes::gpu {

namespace {

// Page-aligned, as a GPU API's page-locked memory is: code that assumes it does here too.
constexpr std::align_val_t kPinnedAlignment{4096};

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

void run_kernel(const Launch& launch, const std::uint8_t* in, std::uint8_t* out, const RoundKeys& keys) {
  run_host_kernel(launch.kernel, in, out, launch.bytes, launch.first_block, launch.state.data(), keys.words.data(),
                  keys.rounds, aes_tables().image.data(), 0, (launch.bytes + kBlockLen - 1) / kBlockLen);
}

class HostDevice;

// One lane: a thread that serves its batches one at a time.
class HostLane final : public Lane {
 public:
  HostLane(HostDevice& device, std::size_t batch_bytes, bool profile)
      : device_(device), profile_(profile), host_(batch_bytes), dev_in_(batch_bytes), dev_out_(batch_bytes) {
    worker_ = std::thread([this] { serve(); });
  }
  ~HostLane() override {
    {
      const std::lock_guard lock(mutex_);
      closing_ = true;
    }
    changed_.notify_all();
    worker_.join();
  }
  HostLane(const HostLane&) = delete;
  HostLane& operator=(const HostLane&) = delete;

  std::uint8_t* host_buffer() override { return host_.data(); }
  std::size_t batch_bytes() const override { return host_.size(); }

  void set_keys(const RoundKeys& keys) override {
    const std::lock_guard lock(mutex_);
    keys_ = keys;
  }

  void enqueue(const Launch& launch, const std::uint8_t* from, std::uint8_t* to) override;

  LaneTimes wait() override {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !queued_; });
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return times_;
  }

  void drain_quietly() noexcept override {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !queued_; });
    error_ = nullptr;
  }

 private:
  void serve();

  HostDevice& device_;
  const bool profile_;
  std::vector<std::uint8_t> host_, dev_in_, dev_out_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool queued_ = false;  // a batch was enqueued and is not yet done
  bool closing_ = false;
  Launch launch_;
  const std::uint8_t* from_ = nullptr;  // where the enqueued batch is copied up from
  std::uint8_t* to_ = nullptr;          // ... and its result down into
  RoundKeys keys_;                      // wiped on destruction
  LaneTimes times_;
  std::exception_ptr error_;
  std::thread worker_;
};

class HostDevice final : public Device {
 public:
  explicit HostDevice(HostDeviceOptions options) : options_(std::move(options)) {}
  ~HostDevice() override {
    for (const auto& [begin, end] : allocations_) ::operator delete(reinterpret_cast<void*>(begin), kPinnedAlignment);
  }
  HostDevice(const HostDevice&) = delete;
  HostDevice& operator=(const HostDevice&) = delete;

  std::string label() const override { return "host GPU adapter"; }

  std::unique_ptr<Lane> open_lane(std::size_t batch_bytes, bool profile) override {
    return std::make_unique<HostLane>(*this, batch_bytes, profile);
  }

  void* allocate_pinned(std::size_t bytes) override {
    void* data = ::operator new(std::max<std::size_t>(bytes, 1), kPinnedAlignment);
    const std::lock_guard lock(mutex_);
    allocations_.emplace_back(address(data), address(data) + bytes);
    return data;
  }
  void free_pinned(void* data) noexcept override {
    {
      const std::lock_guard lock(mutex_);
      const auto it = std::find_if(allocations_.begin(), allocations_.end(),
                                   [&](const Range& r) { return r.first == address(data); });
      if (it == allocations_.end()) return;
      allocations_.erase(it);
    }
    ::operator delete(data, kPinnedAlignment);
  }

  // The strictest API's rules for pinning: memory that overlaps a registration or
  // an allocation of the device's, wholly or in part, is refused.
  bool pin_host(const void* data, std::size_t len) override {
    const Range range{address(data), address(data) + len};
    const std::lock_guard lock(mutex_);
    const auto overlaps = [&](const Range& r) { return range.first < r.second && r.first < range.second; };
    if (std::any_of(registered_.begin(), registered_.end(), overlaps) ||
        std::any_of(allocations_.begin(), allocations_.end(), overlaps)) {
      return false;
    }
    registered_.push_back(range);
    return true;
  }
  void unpin_host(const void* data) noexcept override {
    const std::lock_guard lock(mutex_);
    std::erase_if(registered_, [&](const Range& r) { return r.first == address(data); });
  }

  // The "link" is memcpy, the kernel the bodies on this thread: figures of
  // the host, for the benchmark's tests rather than for comparison.
  LinkRates measure_link(std::size_t bytes, unsigned repeats) override {
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

  double kernel_seconds(const Launch& launch, const RoundKeys& keys, unsigned repeats) override {
    std::vector<std::uint8_t> in(launch.bytes, 0x5a), out(launch.bytes);
    double best = 0;
    for (unsigned r = 0; r < repeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      run_kernel(launch, in.data(), out.data(), keys);
      const double seconds = seconds_since(start);
      if (r == 0 || seconds < best) best = seconds;
    }
    return best;
  }

  // Throws unless [p, p + n) lies wholly in the lane's buffer `lane`, in one
  // allocation or in one registration, as a DMA copy must.
  void check_copy(const std::vector<std::uint8_t>& lane, const std::uint8_t* p, std::size_t n) const {
    const auto holds = [&](const Range& r) { return r.first <= address(p) && address(p) + n <= r.second; };
    if (n == 0 || holds({address(lane.data()), address(lane.data()) + lane.size()})) return;
    const std::lock_guard lock(mutex_);
    if (std::any_of(allocations_.begin(), allocations_.end(), holds) ||
        std::any_of(registered_.begin(), registered_.end(), holds)) {
      return;
    }
    throw Error(
        "host GPU adapter: a batch was enqueued from or into memory that lies neither wholly in the lane's "
        "buffer nor wholly in page-locked memory of the device (a device can't copy it by DMA)");
  }

  const HostDeviceOptions& options() const { return options_; }

 private:
  using Range = std::pair<std::uintptr_t, std::uintptr_t>;  // [begin, end)

  const HostDeviceOptions options_;
  // Lanes check their copies against these from their own threads while
  // other threads allocate and pin.
  mutable std::mutex mutex_;
  std::vector<Range> allocations_;
  std::vector<Range> registered_;
};

void HostLane::enqueue(const Launch& launch, const std::uint8_t* from, std::uint8_t* to) {
  if (launch.bytes > host_.size()) {
    throw Error("host GPU adapter: a batch of " + std::to_string(launch.bytes) + " bytes exceeds the lane's " +
                std::to_string(host_.size()));
  }
  device_.check_copy(host_, from, launch.bytes);
  device_.check_copy(host_, to, launch.bytes);
  {
    const std::lock_guard lock(mutex_);
    if (queued_) throw Error("host GPU adapter: a lane was enqueued with a batch in flight");
    launch_ = launch;
    from_ = from;
    to_ = to;
    queued_ = true;
  }
  changed_.notify_all();
}

void HostLane::serve() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return closing_ || queued_; });
      if (closing_) return;
    }
    // launch_, from_, to_ and keys_ don't change while the batch is queued:
    // enqueue() and set_keys() run with nothing in flight.
    LaneTimes times;
    std::exception_ptr error;
    try {
      const auto start = std::chrono::steady_clock::now();
      std::memcpy(dev_in_.data(), from_, launch_.bytes);
      times.upload = seconds_since(start);
      const auto kernel_start = std::chrono::steady_clock::now();
      run_kernel(launch_, dev_in_.data(), dev_out_.data(), keys_);
      if (device_.options().after_kernel) device_.options().after_kernel(dev_out_.data(), launch_.bytes);
      times.kernel = seconds_since(kernel_start);
      const auto download_start = std::chrono::steady_clock::now();
      std::memcpy(to_, dev_out_.data(), launch_.bytes);
      times.download = seconds_since(download_start);
    } catch (...) {
      error = std::current_exception();
    }
    {
      const std::lock_guard lock(mutex_);
      times_ = profile_ ? times : LaneTimes{};
      error_ = error;
      queued_ = false;
    }
    changed_.notify_all();
  }
}

}  // namespace

std::unique_ptr<Device> open_host_device(HostDeviceOptions options) {
  return std::make_unique<HostDevice>(std::move(options));
}

}  // namespace paes::gpu
