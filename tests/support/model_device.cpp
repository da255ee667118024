#include "support/model_device.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include "cipher/gpu/aes_tables.hpp"
#include "paes/error.hpp"
#include "paes/mode.hpp"
#include "support/host_kernels.hpp"

namespace paes::test {

namespace {

bool overlap(double a_begin, double a_end, double b_begin, double b_end) {
  return std::max(a_begin, b_begin) < std::min(a_end, b_end);
}

}  // namespace

ModelClock::ModelClock(const ModelRates& rates, std::chrono::milliseconds stall_limit)
    : rates_(rates), stall_limit_(stall_limit), last_progress_(std::chrono::steady_clock::now()) {}

double ModelClock::now() const {
  const std::lock_guard lock(mutex_);
  return figures_.now;
}

ModelFigures ModelClock::figures() const {
  const std::lock_guard lock(mutex_);
  return figures_;
}

bool ModelClock::clock_held() const {
  return std::any_of(lanes_.begin(), lanes_.end(), [](const auto& l) { return l->in_use && !l->waiting; });
}

void ModelClock::schedule(LaneState& lane) {
  const auto bytes = static_cast<double>(lane.bytes);
  Batch b;
  b.upload.begin = std::max(lane.submit_time, upload_free_);
  b.upload.end = b.upload.begin + bytes / rates_.upload;
  b.kernel.begin = std::max(b.upload.end, kernel_free_);
  b.kernel.end = b.kernel.begin + bytes / rates_.kernel;
  b.download.begin = std::max(b.kernel.end, download_free_);
  b.download.end = b.download.begin + bytes / rates_.download;
  upload_free_ = b.upload.end;
  kernel_free_ = b.kernel.end;
  download_free_ = b.download.end;

  // A lane's batches follow one another, so of another lane only its latest
  // batch can still be under way when this one starts.
  unsigned in_flight = 1;
  bool overlapped = false;
  for (const auto& other : lanes_) {
    if (other.get() == &lane || !other->scheduled_once) continue;
    const Batch& o = other->batch;
    if (overlap(b.upload.begin, b.download.end, o.upload.begin, o.download.end)) ++in_flight;
    if (overlap(b.upload.begin, b.upload.end, o.kernel.begin, o.kernel.end) ||
        overlap(b.upload.begin, b.upload.end, o.download.begin, o.download.end)) {
      overlapped = true;
    }
  }
  figures_.max_lanes_in_flight = std::max(figures_.max_lanes_in_flight, in_flight);
  if (overlapped) ++figures_.overlapped_uploads;
  figures_.upload_busy += b.upload.end - b.upload.begin;
  figures_.kernel_busy += b.kernel.end - b.kernel.begin;
  figures_.download_busy += b.download.end - b.download.begin;
  ++figures_.batches;
  figures_.bytes += lane.bytes;
  lane.batch = b;
  lane.scheduled_once = true;
  lane.submitted = false;
}

// Batches go on the engines only once every lane in use waits: then nothing
// more can come at this simulated time, and they go in the order of their
// submission time and then of their lanes' opening, whichever thread ran
// first.
void ModelClock::schedule_submitted() {
  std::vector<LaneState*> due;
  for (const auto& lane : lanes_) {
    if (lane->submitted) due.push_back(lane.get());
  }
  std::sort(due.begin(), due.end(), [](const LaneState* a, const LaneState* b) {
    return a->submit_time != b->submit_time ? a->submit_time < b->submit_time : a->id < b->id;
  });
  for (LaneState* lane : due) schedule(*lane);
}

void ModelClock::advance_if_free() {
  const bool any_waiting = std::any_of(lanes_.begin(), lanes_.end(), [](const auto& l) { return l->waiting; });
  if (!any_waiting || clock_held()) return;
  schedule_submitted();
  double next = std::numeric_limits<double>::infinity();
  for (const auto& lane : lanes_) {
    if (lane->waiting) next = std::min(next, lane->batch.download.end);
  }
  figures_.now = std::max(figures_.now, next);
  for (const auto& lane : lanes_) {
    if (lane->waiting && lane->batch.download.end <= figures_.now) lane->waiting = false;
  }
  last_progress_ = std::chrono::steady_clock::now();
  advanced_.notify_all();
}

ModelClock::LaneState* ModelClock::add_lane() {
  const std::lock_guard lock(mutex_);
  auto lane = std::make_unique<LaneState>();
  lane->id = next_id_++;
  lanes_.push_back(std::move(lane));
  return lanes_.back().get();
}

void ModelClock::remove_lane(LaneState* lane) {
  const std::lock_guard lock(mutex_);
  std::erase_if(lanes_, [&](const auto& l) { return l.get() == lane; });
  advance_if_free();
}

void ModelClock::set_in_use(LaneState* lane, bool in_use) {
  const std::lock_guard lock(mutex_);
  lane->in_use = in_use;
  advance_if_free();
}

void ModelClock::begin_compute() {
  const std::lock_guard lock(mutex_);
  ++computing_;
}

void ModelClock::end_compute() {
  const std::lock_guard lock(mutex_);
  --computing_;
  last_progress_ = std::chrono::steady_clock::now();
}

void ModelClock::submit(LaneState* lane, std::size_t bytes) {
  const std::lock_guard lock(mutex_);
  --computing_;
  last_progress_ = std::chrono::steady_clock::now();
  lane->submitted = true;
  lane->submit_time = figures_.now;
  lane->bytes = bytes;
}

gpu::LaneTimes ModelClock::wait(LaneState* lane) {
  std::unique_lock lock(mutex_);
  if (lane->submitted || lane->batch.download.end > figures_.now) {
    lane->waiting = true;
    advance_if_free();
    auto quiet_since = std::chrono::steady_clock::now();
    for (;;) {
      const auto deadline = std::max(quiet_since, last_progress_) + stall_limit_;
      if (advanced_.wait_until(lock, deadline, [&] { return !lane->waiting; })) break;
      const auto now = std::chrono::steady_clock::now();
      if (computing_ > 0) {
        quiet_since = now;
        continue;
      }
      if (now >= std::max(quiet_since, last_progress_) + stall_limit_) {
        const std::string message = stalled_message();
        lane->waiting = false;
        throw Error(message);
      }
    }
  }
  const Batch& b = lane->batch;
  return {b.upload.end - b.upload.begin, b.kernel.end - b.kernel.begin, b.download.end - b.download.begin};
}

void ModelClock::abandon(LaneState* lane) {
  const std::lock_guard lock(mutex_);
  lane->submitted = false;
  lane->waiting = false;
}

std::string ModelClock::stalled_message() const {
  const auto in_use = std::count_if(lanes_.begin(), lanes_.end(), [](const auto& l) { return l->in_use; });
  const auto holding = std::count_if(lanes_.begin(), lanes_.end(), [](const auto& l) { return l->in_use && !l->waiting; });
  return "model device: the simulated clock stood still for " + std::to_string(stall_limit_.count()) +
         " ms of real time while a lane waited: " + std::to_string(holding) + " of the " + std::to_string(in_use) +
         " lanes in use never waited (a lane in use must wait for its batch, or be returned, for the clock to move)";
}

// A lane: its host buffer, its device buffers, its keys, and its state in the
// clock. The AES runs at enqueue(), on the caller's thread; the clock decides
// only when wait() returns.
class ModelLane final : public gpu::Lane {
 public:
  ModelLane(const ModelDevice& device, std::shared_ptr<ModelClock> clock, std::size_t batch_bytes, bool profile)
      : device_(device),
        clock_(std::move(clock)),
        state_(clock_->add_lane()),
        profile_(profile),
        host_(batch_bytes),
        device_in_(batch_bytes),
        device_out_(batch_bytes) {}
  ~ModelLane() override { clock_->remove_lane(state_); }
  ModelLane(const ModelLane&) = delete;
  ModelLane& operator=(const ModelLane&) = delete;

  std::uint8_t* host_buffer() override { return host_.data(); }
  std::size_t batch_bytes() const override { return host_.size(); }

  void set_keys(const gpu::RoundKeys& keys) override {
    if (in_flight_) throw Error("model device: keys set with a batch in flight");
    keys_ = keys;
  }

  void enqueue(const gpu::Launch& launch, const std::uint8_t* from, std::uint8_t* to) override {
    if (in_flight_) throw Error("model device: a lane was enqueued with a batch in flight");
    if (launch.bytes > host_.size()) throw Error("model device: a batch longer than the lane's buffers");
    if (keys_.rounds == 0) throw Error("model device: a batch before set_keys");
    check_memory(from, launch.bytes);
    check_memory(to, launch.bytes);
    clock_->begin_compute();
    try {
      std::memcpy(device_in_.data(), from, launch.bytes);
      gpu::run_host_kernel(launch.kernel, device_in_.data(), device_out_.data(), launch.bytes, launch.first_block,
                           launch.state.data(), keys_.words.data(), keys_.rounds, gpu::aes_tables().image.data(), 0,
                           (launch.bytes + kBlockLen - 1) / kBlockLen);
      std::memcpy(to, device_out_.data(), launch.bytes);
    } catch (...) {
      clock_->end_compute();
      throw;
    }
    clock_->submit(state_, launch.bytes);
    in_flight_ = true;
  }

  gpu::LaneTimes wait() override {
    if (!in_flight_) throw Error("model device: wait() with no batch in flight");
    const gpu::LaneTimes times = clock_->wait(state_);
    in_flight_ = false;
    return profile_ ? times : gpu::LaneTimes{};
  }

  void drain_quietly() noexcept override {
    if (!in_flight_) return;
    try {
      wait();
    } catch (...) {
      clock_->abandon(state_);
      in_flight_ = false;
    }
  }

  void taken() override { clock_->set_in_use(state_, true); }
  void returned() override { clock_->set_in_use(state_, false); }

 private:
  void check_memory(const std::uint8_t* p, std::size_t n) const {
    if (n == 0 || p == host_.data() || device_.in_pinned(p, n)) return;
    throw Error("model device: a copy from or into memory that is neither the lane's buffer nor page-locked");
  }

  const ModelDevice& device_;
  std::shared_ptr<ModelClock> clock_;
  ModelClock::LaneState* state_;
  const bool profile_;
  std::vector<std::uint8_t> host_, device_in_, device_out_;
  gpu::RoundKeys keys_;  // wiped on destruction
  bool in_flight_ = false;
};

namespace {

ModelRates checked(const ModelRates& rates) {
  for (const double r : {rates.upload, rates.kernel, rates.download}) {
    if (!std::isfinite(r) || r <= 0) throw Error("model device: every rate must be a positive number of bytes per second");
  }
  return rates;
}

}  // namespace

ModelDevice::ModelDevice(const ModelRates& rates, std::chrono::milliseconds stall_limit)
    : rates_(checked(rates)), clock_(std::make_shared<ModelClock>(rates_, stall_limit)) {}

// The device owns its page-locked blocks: what a caller didn't free goes with it.
ModelDevice::~ModelDevice() {
  for (const Pinned& p : pinned_) std::free(reinterpret_cast<void*>(p.begin));
}

std::string ModelDevice::label() const { return "model device (simulated clock)"; }

std::unique_ptr<gpu::Lane> ModelDevice::open_lane(std::size_t batch_bytes, bool profile) {
  return std::make_unique<ModelLane>(*this, clock_, batch_bytes, profile);
}

void* ModelDevice::allocate_pinned(std::size_t bytes) {
  void* data = std::malloc(std::max<std::size_t>(bytes, 1));
  if (data == nullptr) return nullptr;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::lock_guard lock(pinned_mutex_);
  pinned_.push_back({begin, begin + bytes});
  return data;
}

void ModelDevice::free_pinned(void* data) noexcept {
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::lock_guard lock(pinned_mutex_);
  const auto erased = std::erase_if(pinned_, [&](const Pinned& p) { return p.begin == begin; });
  if (erased > 0) std::free(data);
}

bool ModelDevice::in_pinned(const void* data, std::size_t len) const {
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::lock_guard lock(pinned_mutex_);
  return std::any_of(pinned_.begin(), pinned_.end(),
                     [&](const Pinned& p) { return p.begin <= begin && begin < p.end && len <= p.end - begin; });
}

gpu::LinkRates ModelDevice::measure_link(std::size_t, unsigned) {
  return {rates_.upload, rates_.download, std::min(rates_.upload, rates_.download)};
}

double ModelDevice::kernel_seconds(const gpu::Launch& launch, const gpu::RoundKeys&, unsigned) {
  return static_cast<double>(launch.bytes) / rates_.kernel;
}

}  // namespace paes::test
