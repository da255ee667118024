#include "cipher/gpu/gpu_backend.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "cipher/gpu/gpu_check.hpp"
#include "paes/error.hpp"

namespace paes {
namespace {

// The kernel that runs a mode's direction on a device: every raw direction
// whose blocks are independent, but CFB8 and CFB1 (an AES per byte or bit:
// no gain on a device). None for the rest, which a GPU backend leaves to the
// CPU's. What is parallel at all is ChunkPlan's to say; this is only which
// kernels exist.
std::optional<gpu::Kernel> kernel_for(Mode mode, Direction direction) {
  const bool encrypt = direction == Direction::encrypt;
  switch (mode) {
    case Mode::ecb: return encrypt ? gpu::Kernel::ecb_encrypt : gpu::Kernel::ecb_decrypt;
    case Mode::ctr: return gpu::Kernel::ctr;
    case Mode::cbc: return encrypt ? std::nullopt : std::optional(gpu::Kernel::cbc_decrypt);
    case Mode::cfb128: return encrypt ? std::nullopt : std::optional(gpu::Kernel::cfb128_decrypt);
    default: return std::nullopt;
  }
}

gpu::Kernel kernel_for(const CipherSpec& spec) { return *kernel_for(spec.mode, spec.direction); }

gpu::RoundKeys round_keys_for(const CipherSpec& spec) {
  return gpu::uses_decrypt_keys(kernel_for(spec)) ? gpu::expand_decrypt_key(spec.key.data(), spec.key.size())
                                                   : gpu::expand_encrypt_key(spec.key.data(), spec.key.size());
}

// One worker's AES on the device: its lane, keyed once, and the chunk under
// way. Each batch goes up, through the kernel and back before update()
// returns (the lane blocks, never spins); the device has as many batches in
// flight as the engine has workers. A batch whose input and output lie in
// page-locked memory (the engines' chunk buffers come from the backend, or
// the caller pinned them) is copied by the device straight from and into
// it; any other goes through the lane's buffer.
//
// A chunk that ends in a partial block (CTR, CFB128) has that block done on
// the CPU, whose cipher then carries on for the rest of the chunk, so pieces
// of any length give OpenSSL's bytes.
class GpuRawCipher final : public RawCipher {
 public:
  // `lane` is the backend's to take back when the cipher goes; null: the
  // cipher borrows `borrowed` (the self-test, while the device opens).
  GpuRawCipher(const GpuCipherBackend& backend, const CipherSpec& spec, std::unique_ptr<gpu::Lane> owned,
               gpu::Lane* borrowed, const std::string& label)
      : backend_(backend),
        spec_(spec),
        kernel_(kernel_for(spec)),
        owned_(std::move(owned)),
        lane_(owned_ ? *owned_ : *borrowed),
        check_(label) {
    lane_.set_keys(round_keys_for(spec));
    lane_.taken();
  }

  ~GpuRawCipher() override {
    lane_.drain_quietly();
    lane_.returned();
    if (owned_) backend_.return_lane(std::move(owned_));
  }
  GpuRawCipher(const GpuRawCipher&) = delete;
  GpuRawCipher& operator=(const GpuRawCipher&) = delete;

  void begin(const Block& start_state) override {
    counter0_ = start_state;
    chain_ = start_state;
    blocks_done_ = 0;
    on_cpu_ = false;
    check_.begin(spec_, start_state);
  }

  void update(std::uint8_t* out, const std::uint8_t* in, std::size_t len) override {
    if (on_cpu_) {
      cpu_->update(out, in, len);
      return;
    }
    const std::size_t whole = len / kBlockLen * kBlockLen;
    for (std::size_t done = 0; done < whole;) {
      const std::size_t n = std::min(whole - done, lane_.batch_bytes() / kBlockLen * kBlockLen);
      run_batch(out + done, in + done, n);
      done += n;
    }
    if (whole != len) finish_on_cpu(out + whole, in + whole, len - whole);
  }

  const char* implementation() const override { return "gpu"; }

 private:
  void run_batch(std::uint8_t* out, const std::uint8_t* in, std::size_t n) {
    const bool direct = backend_.in_pinned(in, n) && backend_.in_pinned(out, n);
    std::uint8_t* host = lane_.host_buffer();
    const std::uint8_t* from = direct ? in : host;
    std::uint8_t* to = direct ? out : host;
    if (!direct) std::memcpy(host, in, n);

    gpu::Launch launch;
    launch.kernel = kernel_;
    launch.bytes = n;
    launch.first_block = blocks_done_;
    if (spec_.mode == Mode::ctr) launch.state = gpu::state_words(counter0_);
    if (spec_.mode == Mode::cbc || spec_.mode == Mode::cfb128) launch.state = gpu::state_words(chain_);
    // Taken before the device overwrites an in-place batch: the sampled
    // input, and the ciphertext block the next batch chains from.
    const gpu::BatchSample sample = check_.sample(from, n, blocks_done_, chain_);
    Block next_chain{};
    std::memcpy(next_chain.data(), from + n - kBlockLen, kBlockLen);

    lane_.enqueue(launch, from, to);
    const gpu::LaneTimes times = lane_.wait();
    check_.verify(sample, to);
    if (!direct) std::memcpy(out, host, n);
    chain_ = next_chain;
    blocks_done_ += n / kBlockLen;
    backend_.count_batch(n, direct, times);
  }

  void finish_on_cpu(std::uint8_t* out, const std::uint8_t* in, std::size_t len) {
    if (!cpu_) cpu_ = cpu_raw_backend(spec_.mode, spec_.direction).make_raw(spec_);
    cpu_->begin(spec_.mode == Mode::ctr ? add_to_counter(counter0_, blocks_done_) : chain_);
    cpu_->update(out, in, len);
    on_cpu_ = true;
  }

  const GpuCipherBackend& backend_;
  const CipherSpec& spec_;
  gpu::Kernel kernel_;
  std::unique_ptr<gpu::Lane> owned_;
  gpu::Lane& lane_;
  gpu::BatchCheck check_;
  std::unique_ptr<RawCipher> cpu_;
  Block counter0_{};               // CTR: the counter of the chunk's first block
  Block chain_{};                  // CBC, CFB128: the ciphertext block before the next batch
  std::uint64_t blocks_done_ = 0;  // of the chunk
  bool on_cpu_ = false;            // past a partial block: the CPU's cipher carries on
};

}  // namespace

namespace {

std::size_t whole_blocks_of_batch(std::size_t batch_bytes) {
  const std::size_t whole = batch_bytes / kBlockLen * kBlockLen;
  if (whole == 0) throw usage_error("a GPU batch must hold at least one block");
  return whole;
}

}  // namespace

GpuCipherBackend::GpuCipherBackend(GpuApi api, std::optional<unsigned> device, std::size_t batch_bytes,
                                   const GpuGeometry& geometry, bool profile)
    : CipherBackend(whole_blocks_of_batch(batch_bytes)),
      name_(api.name),
      api_(std::move(api)),
      device_index_(device),
      batch_bytes_(whole_blocks_of_batch(batch_bytes)),
      geometry_(geometry),
      profile_(profile) {}

GpuCipherBackend::GpuCipherBackend(std::string name, std::unique_ptr<gpu::Device> device, std::size_t batch_bytes)
    : CipherBackend(whole_blocks_of_batch(batch_bytes)),
      name_(std::move(name)),
      batch_bytes_(whole_blocks_of_batch(batch_bytes)) {
  device_ = std::move(device);
  self_test();
}

GpuCipherBackend::~GpuCipherBackend() {
  // Lanes and page-locked memory go before the device that made them.
  free_lanes_.clear();
  if (device_) {
    for (const auto& [data, bytes] : chunk_memory_sizes_) device_->free_pinned(data);
  }
}

bool GpuCipherBackend::available() const {
  if (!api_) return true;
  try {
    return !api_->list_devices().empty();
  } catch (const Error&) {
    return false;
  }
}

bool GpuCipherBackend::runs(Mode mode, Direction direction) const { return kernel_for(mode, direction).has_value(); }

std::string GpuCipherBackend::detail() const {
  std::string text = api_ ? api_->versions() : std::string();
  std::string device;
  {
    const std::lock_guard lock(mutex_);
    if (device_) device = device_->label();
  }
  if (device.empty() && api_) {
    try {
      const std::size_t count = api_->list_devices().size();
      device = std::to_string(count) + (count == 1 ? " device" : " devices");
    } catch (const Error& e) {
      device = e.what();
    }
  }
  if (!device.empty()) text += (text.empty() ? "" : ", ") + device;
  return text;
}

std::string GpuCipherBackend::why_unavailable() const {
  if (!api_) return {};
  try {
    if (api_->list_devices().empty()) return "no " + std::string(api_->label) + " device on this machine";
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

const CipherBackend& GpuCipherBackend::on_device(std::optional<unsigned> index) const {
  if (!index || index == device_index_) return *this;
  // Only the table's row (the API's default device) makes the others.
  if (!api_ || device_index_) throw Error("internal: another device asked of " + name_ + "'s device backend");
  const std::lock_guard lock(devices_mutex_);
  std::unique_ptr<GpuCipherBackend>& backend = on_devices_[*index];
  if (!backend) backend = std::make_unique<GpuCipherBackend>(*api_, index, batch_bytes_, geometry_, profile_);
  return *backend;
}

gpu::Device& GpuCipherBackend::device() const {
  const std::lock_guard open_lock(open_mutex_);
  {
    const std::lock_guard lock(mutex_);
    if (device_) return *device_;
  }
  if (!api_) throw Error(name_ + ": no device");
  std::unique_ptr<gpu::Device> opened = api_->open(device_index_, geometry_);
  {
    const std::lock_guard lock(mutex_);
    device_ = std::move(opened);
  }
  try {
    self_test();
  } catch (...) {
    // Every range recorded so far is this device's (its self-test lane).
    const std::lock_guard lock(mutex_);
    free_lanes_.clear();
    pinned_.clear();
    device_.reset();
    throw;
  }
  return *device_;
}

// The known answers through a lane of its own, before any worker may take
// one: a device that computes AES wrongly is never used.
void GpuCipherBackend::self_test() const {
  std::unique_ptr<gpu::Lane> lane = open_lane();
  const std::string label = device_->label();
  gpu::run_self_test(
      [&](const CipherSpec& spec, std::uint8_t* out, const std::uint8_t* in, std::size_t len) {
        GpuRawCipher cipher(*this, spec, nullptr, lane.get(), label);
        cipher.begin(spec.iv);
        cipher.update(out, in, len);
        return len;
      },
      label);
  return_lane(std::move(lane));
}

std::unique_ptr<gpu::Lane> GpuCipherBackend::take_lane() const {
  device();
  {
    const std::lock_guard lock(mutex_);
    if (!free_lanes_.empty()) {
      std::unique_ptr<gpu::Lane> lane = std::move(free_lanes_.back());
      free_lanes_.pop_back();
      return lane;
    }
  }
  return open_lane();
}

std::unique_ptr<gpu::Lane> GpuCipherBackend::open_lane() const {
  // A batch is at most what the device takes; a chunk longer than a lane's
  // batch runs as several (GpuRawCipher::update).
  const std::size_t batch = std::min(batch_bytes_, device_->max_batch_bytes() / kBlockLen * kBlockLen);
  std::unique_ptr<gpu::Lane> lane = device_->open_lane(batch, profile_);
  const auto begin = reinterpret_cast<std::uintptr_t>(lane->host_buffer());
  const std::lock_guard lock(mutex_);
  pinned_.push_back({begin, begin + lane->batch_bytes()});
  return lane;
}

void GpuCipherBackend::return_lane(std::unique_ptr<gpu::Lane> lane) const noexcept {
  const std::lock_guard lock(mutex_);
  free_lanes_.push_back(std::move(lane));
}

void GpuCipherBackend::count_batch(std::size_t bytes, bool direct, const gpu::LaneTimes& times) const {
  const std::lock_guard lock(mutex_);
  ++stats_.batches;
  stats_.bytes += bytes;
  if (direct) ++stats_.direct_batches;
  stats_.upload_seconds += times.upload;
  stats_.kernel_seconds += times.kernel;
  stats_.download_seconds += times.download;
}

GpuCipherBackend::Stats GpuCipherBackend::stats() const {
  const std::lock_guard lock(mutex_);
  return stats_;
}

void GpuCipherBackend::reset_stats() {
  const std::lock_guard lock(mutex_);
  stats_ = {};
}

bool GpuCipherBackend::in_pinned(const void* data, std::size_t len) const {
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::lock_guard lock(mutex_);
  return std::any_of(pinned_.begin(), pinned_.end(), [&](const PinnedRange& r) {
    return begin >= r.begin && begin <= r.end && len <= r.end - begin;
  });
}

void* GpuCipherBackend::allocate_chunk_memory(std::size_t bytes) const {
  gpu::Device& dev = device();
  {
    const std::lock_guard lock(mutex_);
    // The smallest spare that fits: jobs ask for the same sizes again.
    auto best = spare_chunk_memory_.end();
    for (auto it = spare_chunk_memory_.begin(); it != spare_chunk_memory_.end(); ++it) {
      if (it->second >= bytes && (best == spare_chunk_memory_.end() || it->second < best->second)) best = it;
    }
    if (best != spare_chunk_memory_.end()) {
      void* data = best->first;
      spare_chunk_memory_.erase(best);
      return data;
    }
  }
  void* data = dev.allocate_pinned(bytes);
  if (data == nullptr) return nullptr;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::lock_guard lock(mutex_);
  pinned_.push_back({begin, begin + bytes});
  chunk_memory_sizes_.emplace_back(data, bytes);
  return data;
}

void GpuCipherBackend::free_chunk_memory(void* data, std::size_t /*bytes*/) const noexcept {
  const std::lock_guard lock(mutex_);
  // Kept, page-locked, for the next job: pinning costs in proportion to its size.
  for (const auto& [kept, size] : chunk_memory_sizes_) {
    if (kept == data) {
      spare_chunk_memory_.emplace_back(data, size);
      return;
    }
  }
}

PinnedMemory GpuCipherBackend::pin(const void* data, std::size_t len) const {
  gpu::Device& dev = device();
  if (len == 0 || !dev.pin_host(data, len)) return {};
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  {
    const std::lock_guard lock(mutex_);
    pinned_.push_back({begin, begin + len});
  }
  return PinnedMemory([this, alive = std::weak_ptr<const bool>(alive_), data, begin, len] {
    if (alive.expired()) return;
    {
      const std::lock_guard lock(mutex_);
      const auto it = std::find_if(pinned_.begin(), pinned_.end(),
                                   [&](const PinnedRange& r) { return r.begin == begin && r.end == begin + len; });
      if (it != pinned_.end()) pinned_.erase(it);
    }
    device_->unpin_host(data);
  });
}

gpu::LinkRates GpuCipherBackend::measure_link(std::size_t bytes, unsigned repeats) const {
  return device().measure_link(bytes, std::max(1u, repeats));
}

double GpuCipherBackend::kernel_seconds(const CipherSpec& spec, std::size_t bytes, unsigned repeats) const {
  if (!runs(spec.mode, spec.direction)) throw usage_error(name_ + " runs no kernel for this mode and direction");
  gpu::Launch launch;
  launch.kernel = kernel_for(spec);
  launch.bytes = bytes / kBlockLen * kBlockLen;
  launch.state = gpu::state_words(spec.iv);
  return device().kernel_seconds(launch, round_keys_for(spec), std::max(1u, repeats));
}

std::vector<GpuDeviceInfo> GpuCipherBackend::devices() const { return api_ ? api_->list_devices() : std::vector<GpuDeviceInfo>{}; }

std::string GpuCipherBackend::versions() const { return api_ ? api_->versions() : std::string(); }

std::unique_ptr<RawCipher> GpuCipherBackend::do_make_raw(const CipherSpec& spec) const {
  if (!runs(spec.mode, spec.direction)) {
    throw Error(name_ + " runs ECB, CTR, and CBC and CFB128 decryption on its device, not AES-" +
                std::string(mode_name(spec.mode)) + " " + std::string(direction_name(spec.direction)));
  }
  std::unique_ptr<gpu::Lane> lane = take_lane();
  return std::make_unique<GpuRawCipher>(*this, spec, std::move(lane), nullptr, device_->label());
}

std::unique_ptr<SegmentAead> GpuCipherBackend::do_make_segment(const SecretBytes&, Direction) const {
  throw Error(name_ + " has no AES-GCM: the sealed format runs on the CPU's backends");
}

}  // namespace paes
