// Moving chunks between a job and its input and output, one chunk at a time:
// a feed fills a slot with the next chunk's input, a drain writes a slot's
// output. Files and streams each have one of both; the engines combine them.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "paes/io.hpp"
#include "paes/job.hpp"

namespace paes {

// A chunk buffer's memory: the job's (Job::allocate_chunk_memory: a GPU's
// page-locked memory, which its device copies straight from and into) where
// it gives any, else the heap. Growing keeps the bytes held.
class ChunkBuffer {
 public:
  ChunkBuffer() = default;
  ~ChunkBuffer() { release(); }
  ChunkBuffer(ChunkBuffer&& other) noexcept
      : job_(std::exchange(other.job_, nullptr)),
        data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        heap_(std::move(other.heap_)) {}
  ChunkBuffer& operator=(ChunkBuffer&&) = delete;
  ChunkBuffer(const ChunkBuffer&) = delete;
  ChunkBuffer& operator=(const ChunkBuffer&) = delete;

  std::uint8_t* data() { return data_; }
  std::size_t size() const { return size_; }
  // At least `bytes` long, from `job`'s memory.
  void reserve(const Job& job, std::size_t bytes);

 private:
  void release() noexcept;
  const Job* job_ = nullptr;  // whose memory data_ is; null: the heap's (heap_)
  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  std::unique_ptr<std::uint8_t[]> heap_;
};

// A chunk in flight. The buffer holds the job's lookback bytes, then the
// chunk's input, and room for its output, which is written in place.
struct Slot {
  ChunkBuffer buffer;
  std::size_t lookback = 0;
  Chunk chunk;
  std::size_t produced = 0;

  std::uint8_t* data() { return buffer.data() + lookback; }
  // Sizes the buffer for `c` of `job` and records it as this slot's chunk.
  void prepare(const Job& job, const Chunk& c);
};

// The most bytes of chunk buffers one run (one rank) holds at once, whatever
// the chunk size: a hostile sealed preamble may ask for 64 MiB segments, and
// 2N + 2 slots of those would be ~16 GiB at 128 CPUs. Default chunks (1 MiB)
// stay far below it at any thread count; larger ones get fewer buffers, and so
// fewer workers, instead of more memory.
inline constexpr std::uint64_t kMaxBytesInFlight = std::uint64_t{512} << 20;

// How many of `wanted` slots for `job`'s chunks fit in kMaxBytesInFlight,
// but never fewer than `at_least` (what the caller needs to make progress).
std::size_t slots_within_budget(const Job& job, std::size_t wanted, std::size_t at_least);

// The fewest input bytes that pay for a worker of their own. A worker past
// the first costs a thread, its ChunkWorker (ipsec-mb's manager is 200 KiB)
// and its chunk buffer's page faults before it saves anything. Measured on
// the 2-core VM paes is developed on (raw CTR, files on tmpfs, 41 in-process
// runs of each of --threads 1 and 2, alternated, `--json` seconds): one
// worker moves 0.75 MiB/ms; a second added 1.1 ms at best (a 32-byte job in
// two chunks: 0.08 ms on one thread, 1.2 ms on two), and 5-9 ms at the
// median, waiting for a core the machine's other work held. The second pays
// where its share of the input takes longer than it costs: at best 1.1 ms x
// 0.75 MiB/ms, ~0.8 MiB; 1 MiB is the unit. (At the median cost, on a busy
// machine, two lost to one up to 4 MiB; a free core is what this sizes for.)
inline constexpr std::uint64_t kMinBytesPerWorker = std::uint64_t{1} << 20;

// The workers a job of `bytes` input in `chunks` chunks runs given `threads`:
// no more than its chunks, nor than one per kMinBytesPerWorker; at least one.
// So a small job runs no thread team it can't use, and what the workers
// hold besides their chunks (a thread and a ChunkWorker each, ~0.2 MiB with
// ipsec-mb) stays a fraction of the input's size whatever the thread count.
unsigned workers_within_bytes(unsigned threads, std::uint64_t chunks, std::uint64_t bytes);

class ChunkFeed {
 public:
  virtual ~ChunkFeed() = default;
  // Fills `slot` with the next chunk in order; false when there is none left.
  virtual bool next(Slot& slot) = 0;
  // Whether next() would return false: the last chunk has been handed out.
  virtual bool exhausted() const = 0;
  // Makes a next() that waits on its input throw soon, from any thread: the
  // pipeline calls it once a stage failed, so that a stalled producer can't
  // keep paes alive after the error. Reads from files never wait that long.
  virtual void interrupt() {}
};

class ChunkDrain {
 public:
  virtual ~ChunkDrain() = default;
  // Writes the slot's produced bytes. Called in chunk order by the pipeline.
  virtual void put(Slot& slot) = 0;
};

// Reads chunk `c` (and its lookback) from `in` into `slot`.
void read_chunk(const Job& job, Source& in, const Chunk& c, Slot& slot);

// Input of known length, read with pread in chunk order.
class SourceFeed final : public ChunkFeed {
 public:
  SourceFeed(const Job& job, Source& in);
  bool next(Slot& slot) override;
  bool exhausted() const override { return index_ == count_; }

 private:
  const Job& job_;
  Source& in_;
  std::uint64_t count_;
  std::uint64_t index_ = 0;
};

// A stream read front to back. The end is found by reading: after a full
// chunk, one more byte is read ahead to learn whether that chunk was the last.
// At the end, the total length is checked with the job's chunk_count().
class StreamFeed final : public ChunkFeed {
 public:
  StreamFeed(const Job& job, StreamReader& in) : job_(job), in_(in) {}
  bool next(Slot& slot) override;
  bool exhausted() const override { return done_; }
  void interrupt() override { in_.interrupt(); }
  std::uint64_t bytes_read() const { return total_; }

 private:
  const Job& job_;
  StreamReader& in_;
  std::uint64_t index_ = 0;
  std::uint64_t total_ = 0;
  std::vector<std::uint8_t> tail_;  // the lookback bytes for the next chunk
  int carried_ = -1;                // a byte read ahead, or -1
  bool done_ = false;
};

class SinkDrain final : public ChunkDrain {
 public:
  explicit SinkDrain(Sink& out) : out_(out) {}
  void put(Slot& slot) override;

 private:
  Sink& out_;
};

class StreamDrain final : public ChunkDrain {
 public:
  explicit StreamDrain(StreamWriter& out) : out_(out) {}
  void put(Slot& slot) override;

 private:
  StreamWriter& out_;
};

}  // namespace paes
