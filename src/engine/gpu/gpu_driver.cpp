#include "engine/gpu/gpu_driver.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "engine/first_error.hpp"
#include "cipher/padding.hpp"
#include "gpu/device_piece.hpp"
#include "paes/engine.hpp"
#include "paes/error.hpp"
#include "util/elapsed.hpp"

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

// What one copy thread moves at a time.
constexpr std::size_t kPart = std::size_t{1} << 20;

// Moves a batch between a page-locked buffer and memory or a file, split over
// `threads` in 1 MiB parts: work(at, len) for each part of [0, n). One thread
// copies ~12 GB/s and reads a page-cached file at ~8, about a quarter of what
// a PCIe 5 link moves, and writes new pages of a file (tmpfs, the page cache)
// at a few GB/s, so a lone thread would bound the whole pipeline; the threads
// engine reads and writes with every core. Small batches stay on one thread.
// The first part to throw is rethrown once all are done.
template <class Work>
void split_parts(std::size_t n, unsigned threads, const Work& work) {
  if (threads <= 1 || n < 2 * kPart) {
    work(std::size_t{0}, n);
    return;
  }
  const auto parts = static_cast<std::int64_t>((n + kPart - 1) / kPart);
  FirstError error;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t p = 0; p < parts; ++p) {
    const std::size_t at = static_cast<std::size_t>(p) * kPart;
    if (error.failed()) continue;  // no more I/O once a part failed
    try {
      work(at, std::min(kPart, n - at));
    } catch (...) {
      error.capture();
    }
  }
  error.rethrow();
}

void split_copy(std::uint8_t* dst, const std::uint8_t* src, std::size_t n, unsigned threads) {
  split_parts(n, threads, [&](std::size_t at, std::size_t len) { std::memcpy(dst + at, src + at, len); });
}

}  // namespace

GpuDriver::GpuDriver(std::unique_ptr<gpu::Device> device, const GpuDriverOptions& options)
    : device_(std::move(device)), output_check_(device_->label()) {
  const std::size_t batch = std::min(options.batch_bytes, device_->max_batch_bytes());
  batch_bytes_ = std::max<std::size_t>(kBlockLen, batch / kBlockLen * kBlockLen);
  lanes_ = std::max(3u, options.lanes);
  // More threads than a batch has parts would only start idle ones (a team
  // of 2048 for 16 parts made --threads 4096 twice as slow).
  const auto parts = static_cast<unsigned>((batch_bytes_ + kPart - 1) / kPart);
  copy_threads_ = std::min(options.copy_threads != 0 ? options.copy_threads : std::clamp(online_cpus() / 2, 1u, 8u),
                           parts);
  device_->open_lanes(lanes_, batch_bytes_, options.profile);
  gpu::run_self_test(
      [this](const CipherSpec& spec, std::uint8_t* out, const std::uint8_t* in, std::size_t len) {
        return transform(spec, out, in, len);
      },
      device_->label());
  reset_stats();  // the self-test is not the caller's work
}

GpuDriver::~GpuDriver() {
  if (!device_) return;
  device_->drain_quietly();
  for (const PinnedRange& range : pinned_) {  // handles that outlive us: theirs is a no-op then
    if (range.owned) device_->unpin_host(range.begin);
  }
}

Error no_such_device(const char* api, unsigned index, std::size_t count) {
  const std::string which = count == 1 ? "one " + std::string(api) + " device, --device 0"
                                       : std::to_string(count) + " " + api + " devices, --device 0 to " +
                                             std::to_string(count - 1);
  return usage_error("--device " + std::to_string(index) + ": this machine has " + which + " (see paes info)");
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
  const bool pinned = len != 0 && in_pinned(in, len) && in_pinned(out, len);
  return run_piece(
      len, final, {in + whole, len - whole},
      [&](std::uint8_t* dst, std::size_t offset, std::size_t n) { split_copy(dst, in + offset, n, copy_threads_); },
      [&](const std::uint8_t* src, std::size_t offset, std::size_t n) {
        split_copy(out + offset, src, n, copy_threads_);
      },
      pinned ? Pinned{in, out} : Pinned{}, nullptr);
}

PinnedMemory GpuDriver::pin(const void* data, std::size_t len) {
  if (data == nullptr || len == 0) return {};
  // Inside memory this driver pinned: usable as it is, and the device would
  // refuse to register it again. Else the device pins it, or refuses.
  const bool inside_ours = in_pinned(data, len);
  if (!inside_ours && !device_->pin_host(data, len)) return {};
  const auto* begin = static_cast<const std::uint8_t*>(data);
  const std::uint64_t id = next_pin_id_++;
  pinned_.push_back({id, begin, begin + len, !inside_ours});
  return PinnedMemory([this, id, alive = std::weak_ptr<const bool>(alive_)] {
    if (alive.lock()) unpin(id);
  });
}

void GpuDriver::unpin(std::uint64_t id) noexcept {
  const auto it = std::find_if(pinned_.begin(), pinned_.end(), [&](const PinnedRange& r) { return r.id == id; });
  if (it == pinned_.end()) return;
  if (!it->owned) {
    pinned_.erase(it);
    return;
  }
  device_->drain_quietly();  // nothing may still be copying from or into it
  device_->unpin_host(it->begin);
  // The ranges pinned inside it are no longer pinned: their handles go
  // empty-handed (unpin finds nothing), and their memory is staged again.
  const auto begin = reinterpret_cast<std::uintptr_t>(it->begin);
  const auto end = reinterpret_cast<std::uintptr_t>(it->end);
  std::erase_if(pinned_, [&](const PinnedRange& r) {
    return r.id == id || (!r.owned && reinterpret_cast<std::uintptr_t>(r.begin) >= begin &&
                          reinterpret_cast<std::uintptr_t>(r.end) <= end);
  });
}

bool GpuDriver::in_pinned(const void* data, std::size_t len) const {
  // As addresses: the caller's buffer and a pinned range may be different
  // objects, which pointers may not be compared across.
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  return std::any_of(pinned_.begin(), pinned_.end(), [&](const PinnedRange& r) {
    const auto range_begin = reinterpret_cast<std::uintptr_t>(r.begin);
    const auto range_end = reinterpret_cast<std::uintptr_t>(r.end);
    return begin >= range_begin && begin <= range_end && len <= range_end - begin;
  });
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
    } else {  // straight into page-locked memory
      split_parts(n, copy_threads_,
                  [&](std::size_t at, std::size_t part) { in.read_at(offset + at, {dst + at, part}); });
    }
  };
  const Drain drain = [&](const std::uint8_t* src, std::size_t offset, std::size_t n) {
    if (std::uint8_t* dst = out.view(offset, n)) {
      split_copy(dst, src, n, copy_threads_);
    } else {  // straight from page-locked memory
      split_parts(n, copy_threads_,
                  [&](std::size_t at, std::size_t part) { out.write_at(offset + at, {src + at, part}); });
    }
  };
  return run_piece(len, true, {tail.data(), reads_tail ? tail_len : 0}, fill, drain, {}, progress);
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
    Batch batch;              // what the reader put in it
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
                                 const Drain& drain, const Pinned& pinned,
                                 const std::function<void(std::uint64_t)>& progress) {
  if (!begun_) throw Error(device_->label() + ": update() before begin()");
  begun_ = false;  // until this piece succeeds: a piece that fails ends its message
  const gpu::DevicePiece piece(mode_, direction_, padded_, len, final, tail, "GPU");
  const std::size_t device_len = piece.device_len();
  const std::size_t batches = std::max<std::size_t>(1, (device_len + batch_bytes_ - 1) / batch_bytes_);
  const auto fill_batch = [&](std::size_t i, std::uint8_t* host) {
    const std::size_t at = i * batch_bytes_;
    Batch batch;
    batch.bytes = std::min(batch_bytes_, device_len - at);
    batch.input_bytes = std::min(at + batch.bytes, len) - std::min(at, len);
    batch.last = i + 1 == batches;
    // Pinned memory goes straight to the device, but for a batch that holds
    // a padding block (not in the input) or whose padding is to be stripped
    // (the caller's output ends before it).
    if (pinned.in != nullptr && at + batch.bytes <= len && !(batch.last && piece.strips_padding())) {
      batch.from = pinned.in + at;
      batch.to = pinned.out + at;
    } else {
      piece.stage(host, at, batch.bytes, fill);
    }
    return batch;
  };
  const std::uint64_t produced =
      run_batches(fill_batch, drain, piece.strips_padding(), batches > 1, nullptr, progress);
  begun_ = !final;
  return static_cast<std::size_t>(produced);
}

std::uint64_t GpuDriver::run_stream(const CipherSpec& spec, StreamReader& in, StreamWriter& out,
                                    const std::function<void(std::uint64_t)>& progress) {
  begin(spec, spec.iv);
  begun_ = false;  // a stream is its whole message
  const bool pads = spec.padded() && spec.direction == Direction::encrypt;
  int carried = -1;         // the byte read ahead to learn whether a full batch was the last
  bool pad_batch = false;   // the padding block still to come, alone, after a full last batch
  std::uint64_t total = 0;  // the stream's bytes so far
  const auto fill_batch = [&](std::size_t, std::uint8_t* host) {
    Batch batch;
    std::size_t got = 0;
    if (!pad_batch) {
      if (carried >= 0) host[got++] = static_cast<std::uint8_t>(std::exchange(carried, -1));
      got += in.read_full(host + got, batch_bytes_ - got);
      batch.last = got < batch_bytes_;
      if (!batch.last) {
        std::uint8_t ahead = 0;
        if (in.read_full(&ahead, 1) == 1) {
          carried = ahead;
        } else if (pads) {
          pad_batch = true;  // no room for the padding block in this one
        } else {
          batch.last = true;
        }
      }
    } else {
      batch.last = true;
    }
    batch.input_bytes = got;
    total += got;
    // Errors name the stream's length, as the CPU engines do, not the batch's.
    if (batch.last) check_message_length(mode_, direction_, padded_, total);
    const std::size_t whole = got / kBlockLen * kBlockLen;
    const gpu::DevicePiece piece(mode_, direction_, padded_, got, batch.last, {host + whole, got - whole}, "GPU");
    batch.bytes = piece.device_len();
    if (batch.bytes > got) piece.stage(host + whole, whole, batch.bytes - whole, [](std::uint8_t*, std::size_t, std::size_t) {});
    return batch;
  };
  const Drain drain = [&](const std::uint8_t* src, std::size_t, std::size_t n) { out.write_all({src, n}); };
  const bool strips = spec.padded() && spec.direction == Direction::decrypt;
  return run_batches(fill_batch, drain, strips, true, [&] { in.interrupt(); }, progress);
}

std::uint64_t GpuDriver::run_batches(const FillBatch& fill, const Drain& drain, bool strips_padding, bool overlap,
                                     const std::function<void()>& interrupt,
                                     const std::function<void(std::uint64_t)>& progress) {
  const auto lane_of = [&](std::size_t i) { return static_cast<unsigned>(i % lanes_); };
  Pipeline pipe(lanes_);
  std::uint64_t launched_at = 0;  // device bytes of the batches launched so far
  std::uint64_t written_at = 0;   // ... and of those written
  std::uint64_t produced = 0;

  // Each stage's busy time goes to stats_, a field per stage: the stages run
  // on three threads, and are read after they joined.
  const auto fill_batch = [&](std::size_t i) {
    const unsigned l = lane_of(i);
    const auto start = std::chrono::steady_clock::now();
    pipe.lane[l].batch = fill(i, device_->host_buffer(l));
    stats_.fill_seconds += seconds_since(start);
    return pipe.lane[l].batch.last;
  };
  const auto launch_batch = [&](std::size_t i) {
    const unsigned l = lane_of(i);
    const Batch& batch = pipe.lane[l].batch;
    const std::uint8_t* input = batch.from != nullptr ? batch.from : device_->host_buffer(l);
    const std::size_t n = batch.bytes;
    gpu::Launch launch;
    launch.kernel = kernel_;
    launch.bytes = n;
    launch.first_block = blocks_done_ + launched_at / kBlockLen;
    if (mode_ == Mode::ctr) launch.state = block_words(counter0_);
    if (mode_ == Mode::cbc || mode_ == Mode::cfb128) launch.state = block_words(chain_);
    launched_at += n;
    if (n != 0) {  // an empty message launches nothing
      pipe.lane[l].sample = output_check_.sample(input, n, launch.first_block, chain_);
      // The next batch chains from this one's last ciphertext block, taken
      // before the download overwrites it (in place, or in the lane).
      if (n >= kBlockLen) std::memcpy(chain_.data(), input + n - kBlockLen, kBlockLen);
      device_->enqueue(l, launch, input, batch.to != nullptr ? batch.to : device_->host_buffer(l));
      stats_.bytes += n;
      stats_.batches += 1;
      if (batch.from != nullptr) stats_.direct_batches += 1;
    }
    return batch.last;
  };
  const auto drain_batch = [&](std::size_t i) {
    const unsigned l = lane_of(i);
    const Batch& batch = pipe.lane[l].batch;
    std::size_t n = batch.bytes;
    const std::uint8_t* result = batch.to != nullptr ? batch.to : device_->host_buffer(l);
    auto start = std::chrono::steady_clock::now();
    if (n != 0) {
      const gpu::LaneTimes times = device_->wait(l);
      stats_.wait_seconds += seconds_since(start);
      start = std::chrono::steady_clock::now();
      output_check_.verify(pipe.lane[l].sample, result);
      stats_.checked_batches += 1;
      stats_.write_seconds += times.upload;
      stats_.kernel_seconds += times.kernel;
      stats_.read_seconds += times.download;
    }
    // A padded decryption's padding ends its last block (its length was
    // checked whole blocks and not empty when the batch was filled).
    if (batch.last && strips_padding) n -= pkcs7_pad_len(result + n - kBlockLen);
    if (batch.to == nullptr) drain(result, static_cast<std::size_t>(written_at), n);  // else already in place
    stats_.drain_seconds += seconds_since(start);
    written_at += batch.bytes;
    produced += n;
    if (progress) progress(batch.input_bytes);
    return batch.last;
  };

  if (!overlap) {  // one batch: nothing to overlap, no threads
    try {
      for (std::size_t i = 0;; ++i) {
        const bool last = fill_batch(i);
        launch_batch(i);
        drain_batch(i);
        if (last) break;
      }
    } catch (...) {
      device_->drain_quietly();
      throw;
    }
  } else {
    using State = Pipeline::State;
    // Each stage takes the batches in order until it has done the last one.
    const auto stage = [&](State from, State to, const auto& work) {
      for (std::size_t i = 0;; ++i) {
        if (!pipe.await(lane_of(i), from)) return;
        bool last = false;
        try {
          last = work(i);
        } catch (...) {
          pipe.fail();
          if (interrupt) interrupt();  // a reader waiting on a pipe gives up
          return;
        }
        pipe.advance(lane_of(i), to);
        if (last) return;
      }
    };
    std::thread reader;
    std::thread writer;
    try {
      reader = std::thread([&] { stage(State::free, State::filled, fill_batch); });
      writer = std::thread([&] { stage(State::launched, State::free, drain_batch); });
    } catch (...) {  // no thread to be had: stop the one that started
      pipe.fail();
      if (interrupt) interrupt();
    }
    if (writer.joinable()) stage(State::filled, State::launched, launch_batch);
    if (reader.joinable()) reader.join();
    if (writer.joinable()) writer.join();
    if (pipe.failed) {
      device_->drain_quietly();
      pipe.error.rethrow();
    }
  }
  blocks_done_ += launched_at / kBlockLen;
  return produced;
}

}  // namespace paes
