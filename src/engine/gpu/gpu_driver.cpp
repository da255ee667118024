#include "engine/gpu/gpu_driver.hpp"

#include <omp.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/first_error.hpp"
#include "gpu/device_piece.hpp"
#include "paes/engine.hpp"
#include "paes/error.hpp"

namespace paes {

namespace {

std::array<std::uint32_t, 4> block_words(const Block& b) {
  std::array<std::uint32_t, 4> w{};
  for (std::size_t i = 0; i < 4; ++i) {
    w[i] = (std::uint32_t{b[4 * i]} << 24) | (std::uint32_t{b[4 * i + 1]} << 16) |
           (std::uint32_t{b[4 * i + 2]} << 8) | std::uint32_t{b[4 * i + 3]};
  }
  return w;
}

// A copy between memory and a page-locked buffer, split over `threads`: one
// thread copies ~12 GB/s, about a quarter of what a PCIe 5 link moves, so a
// lone copy would bound the whole pipeline. Small copies stay on one thread.
void split_copy(std::uint8_t* dst, const std::uint8_t* src, std::size_t n, unsigned threads) {
  constexpr std::size_t kPart = std::size_t{1} << 20;
  if (threads <= 1 || n < 2 * kPart) {
    std::memcpy(dst, src, n);
    return;
  }
  const auto parts = static_cast<std::int64_t>((n + kPart - 1) / kPart);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t p = 0; p < parts; ++p) {
    const std::size_t at = static_cast<std::size_t>(p) * kPart;
    std::memcpy(dst + at, src + at, std::min(kPart, n - at));
  }
}

}  // namespace

GpuDriver::GpuDriver(std::unique_ptr<gpu::Device> device, const GpuDriverOptions& options)
    : device_(std::move(device)), output_check_(device_->label()) {
  const std::size_t batch = std::min(options.batch_bytes, device_->max_batch_bytes());
  batch_bytes_ = std::max<std::size_t>(kBlockLen, batch / kBlockLen * kBlockLen);
  lanes_ = std::max(3u, options.lanes);
  copy_threads_ = options.copy_threads != 0 ? options.copy_threads : std::clamp(online_cpus() / 2, 1u, 8u);
  device_->open_lanes(lanes_, batch_bytes_, options.profile);
  gpu::run_self_test(
      [this](const CipherSpec& spec, std::uint8_t* out, const std::uint8_t* in, std::size_t len) {
        return transform(spec, out, in, len);
      },
      device_->label());
  reset_stats();  // the self-test is not the caller's work
}

GpuDriver::~GpuDriver() {
  if (device_) device_->drain_quietly();
}

bool GpuDriver::supports(const CipherSpec& spec) { return gpu::runs_on_gpu(spec); }

void GpuDriver::begin(const CipherSpec& spec, const Block& start_state) {
  if (!supports(spec)) {
    throw usage_error(std::string("GPU engines run ECB, CTR and CBC/CFB decryption; ") +
                      std::string(mode_name(spec.mode)) + " " + std::string(direction_name(spec.direction)) +
                      " is not among them (sequential directions run on the CPU)");
  }
  check_key_length(spec.key.size());
  device_->drain_quietly();
  begun_ = false;
  mode_ = spec.mode;
  direction_ = spec.direction;
  padded_ = spec.padded();
  kernel_ = gpu::kernel_for(spec);
  device_->set_keys(gpu::uses_decrypt_keys(kernel_) ? gpu::expand_decrypt_key(spec.key.data(), spec.key.size())
                                                     : gpu::expand_encrypt_key(spec.key.data(), spec.key.size()));
  counter0_ = start_state;
  chain_ = start_state;
  blocks_done_ = 0;
  output_check_.begin(spec, start_state);
  begun_ = true;
}

std::size_t GpuDriver::update(std::uint8_t* out, const std::uint8_t* in, std::size_t len, bool final) {
  const std::size_t whole = len / kBlockLen * kBlockLen;
  return run_piece(
      len, final, {in + whole, len - whole},
      [&](std::uint8_t* dst, std::size_t offset, std::size_t n) { split_copy(dst, in + offset, n, copy_threads_); },
      [&](const std::uint8_t* src, std::size_t offset, std::size_t n) {
        split_copy(out + offset, src, n, copy_threads_);
      },
      nullptr);
}

std::size_t GpuDriver::transform(const CipherSpec& spec, std::uint8_t* out, const std::uint8_t* in,
                                 std::size_t len) {
  begin(spec, spec.iv);
  return update(out, in, len, true);
}

std::uint64_t GpuDriver::run(const CipherSpec& spec, Source& in, Sink& out,
                             const std::function<void(std::uint64_t)>& progress) {
  begin(spec, spec.iv);
  const auto len = static_cast<std::size_t>(in.size());
  Block tail{};
  const std::size_t tail_len = len % kBlockLen;
  const bool reads_tail = spec.padded() && spec.direction == Direction::encrypt;
  if (reads_tail && tail_len != 0) in.read_at(len - tail_len, {tail.data(), tail_len});
  const Fill fill = [&](std::uint8_t* dst, std::size_t offset, std::size_t n) {
    if (const std::uint8_t* src = in.view(offset, n)) {
      split_copy(dst, src, n, copy_threads_);
    } else {
      in.read_at(offset, {dst, n});  // straight into page-locked memory
    }
  };
  const Drain drain = [&](const std::uint8_t* src, std::size_t offset, std::size_t n) {
    if (std::uint8_t* dst = out.view(offset, n)) {
      split_copy(dst, src, n, copy_threads_);
    } else {
      out.write_at(offset, {src, n});  // straight from page-locked memory
    }
  };
  return run_piece(len, true, {tail.data(), reads_tail ? tail_len : 0}, fill, drain, progress);
}

gpu::LinkRates GpuDriver::measure_link(std::size_t bytes, unsigned repeats) {
  device_->drain_quietly();
  return device_->measure_link(bytes, std::max(1u, repeats));
}

double GpuDriver::kernel_only_seconds(const CipherSpec& spec, std::size_t bytes, unsigned repeats) {
  begin(spec, spec.iv);
  begun_ = false;  // no message follows
  gpu::Launch launch;
  launch.kernel = kernel_;
  launch.bytes = bytes / kBlockLen * kBlockLen;
  launch.state = block_words(spec.iv);
  return device_->kernel_seconds(launch, std::max(1u, repeats));
}

// The pipeline of one piece (see gpu_driver.hpp): batch i uses lane i % L,
// which goes free -> filled (reader) -> launched (calling thread) -> free
// (writer); each stage takes the batches in order.
struct GpuDriver::Pipeline {
  enum class State { free, filled, launched };
  struct Lane {
    State state = State::free;
    gpu::BatchSample sample;  // the blocks of its batch checked on the CPU
  };

  explicit Pipeline(unsigned lanes) : lane(lanes) {}

  // Waits until `l` is in `want`; false once any stage failed.
  bool await(unsigned l, State want) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return failed || lane[l].state == want; });
    return !failed;
  }
  void advance(unsigned l, State next) {
    {
      const std::lock_guard lock(mutex);
      lane[l].state = next;
    }
    changed.notify_all();
  }
  void fail() {
    error.capture();
    {
      const std::lock_guard lock(mutex);
      failed = true;
    }
    changed.notify_all();
  }

  std::vector<Lane> lane;
  std::mutex mutex;
  std::condition_variable changed;
  bool failed = false;
  FirstError error;
};

std::size_t GpuDriver::run_piece(std::size_t len, bool final, std::span<const std::uint8_t> tail, const Fill& fill,
                                 const Drain& drain, const std::function<void(std::uint64_t)>& progress) {
  if (!begun_) throw Error(device_->label() + ": update() before begin()");
  begun_ = false;  // until this piece succeeds: a piece that fails ends its message
  const gpu::DevicePiece piece(mode_, direction_, padded_, len, final, tail, "GPU");
  const std::size_t device_len = piece.device_len();
  const std::size_t batches = (device_len + batch_bytes_ - 1) / batch_bytes_;
  const auto batch_at = [&](std::size_t i) { return i * batch_bytes_; };
  const auto batch_len = [&](std::size_t i) { return std::min(batch_bytes_, device_len - batch_at(i)); };
  const auto lane_of = [&](std::size_t i) { return static_cast<unsigned>(i % lanes_); };
  Pipeline pipe(lanes_);
  std::size_t produced = device_len;

  const auto fill_batch = [&](std::size_t i) {
    piece.stage(device_->host_buffer(lane_of(i)), batch_at(i), batch_len(i), fill);
  };
  const auto launch_batch = [&](std::size_t i) {
    const unsigned l = lane_of(i);
    const std::uint8_t* staged = device_->host_buffer(l);
    const std::size_t n = batch_len(i);
    gpu::Launch launch;
    launch.kernel = kernel_;
    launch.bytes = n;
    launch.first_block = blocks_done_ + batch_at(i) / kBlockLen;
    if (mode_ == Mode::ctr) launch.state = block_words(counter0_);
    if (mode_ == Mode::cbc || mode_ == Mode::cfb128) launch.state = block_words(chain_);
    pipe.lane[l].sample = output_check_.sample(staged, n, launch.first_block, chain_);
    // The next batch chains from this one's last ciphertext block, taken from
    // the staged copy before the download overwrites it.
    if (n >= kBlockLen) std::memcpy(chain_.data(), staged + n - kBlockLen, kBlockLen);
    device_->enqueue(l, launch);
    stats_.bytes += n;
    stats_.batches += 1;
  };
  const auto drain_batch = [&](std::size_t i) {
    const unsigned l = lane_of(i);
    const gpu::LaneTimes times = device_->wait(l);
    const std::uint8_t* result = device_->host_buffer(l);
    output_check_.verify(pipe.lane[l].sample, result);
    stats_.checked_batches += 1;
    stats_.write_seconds += times.upload;
    stats_.kernel_seconds += times.kernel;
    stats_.read_seconds += times.download;
    std::size_t n = batch_len(i);
    if (i + 1 == batches && piece.strips_padding()) {
      const std::size_t pad = piece.stripped(result + n - kBlockLen);
      n -= pad;
      produced -= pad;
    }
    drain(result, batch_at(i), n);
    if (progress) progress(std::min(batch_at(i) + batch_len(i), len) - std::min(batch_at(i), len));
  };

  if (batches <= 1) {  // nothing to overlap: no threads
    try {
      for (std::size_t i = 0; i < batches; ++i) {
        fill_batch(i);
        launch_batch(i);
        drain_batch(i);
      }
    } catch (...) {
      device_->drain_quietly();
      throw;
    }
  } else {
    using State = Pipeline::State;
    const auto stage = [&](State from, State to, const auto& work) {
      for (std::size_t i = 0; i < batches; ++i) {
        if (!pipe.await(lane_of(i), from)) return;
        try {
          work(i);
        } catch (...) {
          pipe.fail();
          return;
        }
        pipe.advance(lane_of(i), to);
      }
    };
    std::thread reader;
    std::thread writer;
    try {
      reader = std::thread([&] { stage(State::free, State::filled, fill_batch); });
      writer = std::thread([&] { stage(State::launched, State::free, drain_batch); });
    } catch (...) {  // no thread to be had: stop the one that started
      pipe.fail();
    }
    if (writer.joinable()) stage(State::filled, State::launched, launch_batch);
    if (reader.joinable()) reader.join();
    if (writer.joinable()) writer.join();
    if (pipe.failed) {
      device_->drain_quietly();
      pipe.error.rethrow();
    }
  }
  blocks_done_ += device_len / kBlockLen;
  begun_ = !final;
  return produced;
}

}  // namespace paes
