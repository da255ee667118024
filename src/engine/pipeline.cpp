#include "engine/pipeline.hpp"

#include <condition_variable>
#include <deque>
#include <optional>
#include <thread>
#include <vector>

#include "engine/chunk_runner.hpp"

namespace paes {
namespace {

// Enough buffers for the reader, the cipher and the writer to each hold one
// and for one to wait between every pair of stages.
constexpr std::size_t kBuffers = 4;

struct Slot {
  std::vector<std::uint8_t> bytes;
  Piece piece;
  std::size_t out_len = 0;
};

// A blocking FIFO of slot indices that can be shut down from any stage, which
// wakes every waiter so a failure anywhere ends the whole pipeline.
class SlotQueue {
 public:
  void push(std::size_t slot) {
    {
      std::lock_guard lock(mutex_);
      slots_.push_back(slot);
    }
    ready_.notify_one();
  }
  std::optional<std::size_t> pop() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return !slots_.empty() || shut_; });
    if (shut_) return std::nullopt;
    const std::size_t slot = slots_.front();
    slots_.pop_front();
    return slot;
  }
  void shut_down() {
    {
      std::lock_guard lock(mutex_);
      shut_ = true;
    }
    ready_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::size_t> slots_;
  bool shut_ = false;
};

}  // namespace

std::uint64_t run_pipelined(const ChunkPlan& plan, ChunkCipher& cipher, Source& in, Sink& out) {
  const Chunk chunk = plan.chunk(0);
  const std::uint64_t pieces = piece_count(plan, chunk);
  std::vector<Slot> slots(kBuffers);
  SlotQueue free_slots, read_slots, done_slots;
  for (std::size_t i = 0; i < kBuffers; ++i) free_slots.push(i);

  FirstError error;
  auto fail = [&] {
    error.capture();
    for (SlotQueue* q : {&free_slots, &read_slots, &done_slots}) q->shut_down();
  };

  std::thread reader([&] {
    try {
      for (std::uint64_t i = 0; i < pieces; ++i) {
        const auto slot = free_slots.pop();
        if (!slot) return;
        Slot& s = slots[*slot];
        s.piece = piece(plan, chunk, i);
        if (s.bytes.size() < s.piece.len + kBlockLen) s.bytes.resize(s.piece.len + kBlockLen);
        in.read_at(s.piece.offset, {s.bytes.data(), s.piece.len});
        read_slots.push(*slot);
      }
    } catch (...) {
      fail();
    }
  });

  std::uint64_t written = 0;
  std::thread writer([&] {
    try {
      for (std::uint64_t i = 0; i < pieces; ++i) {
        const auto slot = done_slots.pop();
        if (!slot) return;
        Slot& s = slots[*slot];
        out.write_at(chunk.out_offset + written, {s.bytes.data(), s.out_len});
        written += s.out_len;
        free_slots.push(*slot);
      }
    } catch (...) {
      fail();
    }
  });

  try {
    cipher.begin(plan.start_state(chunk, nullptr));
    for (std::uint64_t i = 0; i < pieces; ++i) {
      const auto slot = read_slots.pop();
      if (!slot) break;
      Slot& s = slots[*slot];
      s.out_len = cipher.update(s.bytes.data(), s.bytes.data(), s.piece.len, s.piece.final);
      done_slots.push(*slot);
    }
  } catch (...) {
    fail();
  }
  reader.join();
  writer.join();
  error.rethrow();
  return written;
}

}  // namespace paes
