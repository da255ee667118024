// The bytes a run holds in chunk buffers are bounded, whatever the chunk size
// and thread count: a sealed preamble chooses its segment size (up to 64 MiB),
// and the pipeline's 2N + 2 slots of that would be ~16 GiB at 128 CPUs.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "engine/feed.hpp"
#include "engine/pipeline.hpp"
#include "format/sealed_format.hpp"
#include "paes/error.hpp"
#include "paes/plan.hpp"
#include "test_support.hpp"

namespace paes {
namespace {

constexpr std::uint64_t kHugeChunk = std::uint64_t{64} << 20;

// A parallel job of 64 MiB chunks whose chunks are really 1 byte long: the
// pipeline sizes its ring by the nominal length, the test allocates nothing.
class HugeChunks final : public test::StridedChunksJob {
 public:
  HugeChunks() : StridedChunksJob(kHugeChunk) {}
  std::unique_ptr<ChunkWorker> make_worker() const override;

  // Chunk 0's worker holds it until the reader has taken every slot it can.
  mutable std::mutex mutex;
  mutable std::condition_variable changed;
  mutable std::uint64_t fed = 0;
};

class HoldFirstChunk final : public ChunkWorker {
 public:
  explicit HoldFirstChunk(const HugeChunks& job) : job_(job) {}
  std::size_t transform(const Chunk& c, std::uint8_t*, const std::uint8_t*) override {
    if (c.index != 0) return static_cast<std::size_t>(c.in_len);
    // Until the feed has stopped being called (it waits for a free slot).
    std::unique_lock lock(job_.mutex);
    for (;;) {
      const std::uint64_t before = job_.fed;
      if (!job_.changed.wait_for(lock, std::chrono::milliseconds(200), [&] { return job_.fed != before; })) break;
    }
    return static_cast<std::size_t>(c.in_len);
  }

 private:
  const HugeChunks& job_;
};

std::unique_ptr<ChunkWorker> HugeChunks::make_worker() const { return std::make_unique<HoldFirstChunk>(*this); }

class CountingFeed final : public ChunkFeed {
 public:
  CountingFeed(const HugeChunks& job, std::uint64_t count) : job_(job), count_(count) {}
  bool next(Slot& slot) override {
    std::lock_guard lock(job_.mutex);
    if (job_.fed == count_) return false;
    slot.prepare(job_, job_.chunk(job_.fed, 1, job_.fed + 1 == count_));
    slots_used.insert(&slot);
    ++job_.fed;
    job_.changed.notify_all();
    return true;
  }
  bool exhausted() const override {
    std::lock_guard lock(job_.mutex);
    return job_.fed == count_;
  }
  std::set<const Slot*> slots_used;

 private:
  const HugeChunks& job_;
  std::uint64_t count_;
};

class NullDrain final : public ChunkDrain {
 public:
  void put(Slot&) override {}
};

TEST(BytesInFlight, PipelineRingOfHugeChunksStaysWithinTheBudget) {
  HugeChunks job;
  CountingFeed feed(job, 300);
  NullDrain drain;
  run_pipeline(job, feed, drain, 64, nullptr);  // 130 slots of 64 MiB unbounded: 8.1 GiB
  EXPECT_GE(feed.slots_used.size(), 3u);
  EXPECT_LE(feed.slots_used.size() * kHugeChunk, kMaxBytesInFlight);
}

TEST(BytesInFlight, BudgetLeavesDefaultChunksAloneAndKeepsAFloor) {
  const SecretBytes key(std::vector<std::uint8_t>(32, 1).data(), 32);
  const SegmentJob default_segments(Direction::decrypt, 32, kDefaultSegmentLen, key, NoncePrefix{});
  EXPECT_EQ(slots_within_budget(default_segments, 258, 3), 258u);  // 128 workers, 1 MiB segments
  const SegmentJob hostile(Direction::decrypt, 32, kMaxSegmentLen, key, NoncePrefix{});
  EXPECT_LE(slots_within_budget(hostile, 258, 3) * kMaxSegmentLen, kMaxBytesInFlight);
  EXPECT_GE(slots_within_budget(hostile, 258, 3), 3u);

  const CipherSpec spec = test::make_spec(Mode::ctr, Direction::encrypt, 256, 1);
  const ChunkPlan gigabyte_chunks(spec, ChunkPlan::kMaxChunkLen);
  EXPECT_EQ(slots_within_budget(gigabyte_chunks, 34, 3), 3u);  // the caller's floor wins
  EXPECT_EQ(slots_within_budget(gigabyte_chunks, 16, 1), 1u);
}

// A job whose workers and drain record the threads they ran on. With
// `await_second_worker`, chunk 0's worker holds it until a chunk has been
// transformed on another thread, and fails if none is within 10 s: the
// chunks then ran on one worker.
class ThreadRecordingJob final : public test::StridedChunksJob {
 public:
  explicit ThreadRecordingJob(std::uint64_t chunk_len = 16, bool await_second_worker = false)
      : StridedChunksJob(chunk_len), await_second_worker_(await_second_worker) {}
  std::unique_ptr<ChunkWorker> make_worker() const override;
  mutable std::mutex mutex;
  mutable std::condition_variable changed;
  mutable std::set<std::thread::id> worker_threads;
  mutable std::atomic<unsigned> workers_made{0};  // a pipeline worker makes its ChunkWorker as it starts
  const bool await_second_worker_;
};

class RecordThread final : public ChunkWorker {
 public:
  explicit RecordThread(const ThreadRecordingJob& job) : job_(job) {}
  std::size_t transform(const Chunk& c, std::uint8_t*, const std::uint8_t*) override {
    std::unique_lock lock(job_.mutex);
    job_.worker_threads.insert(std::this_thread::get_id());
    job_.changed.notify_all();
    if (c.index == 0 && job_.await_second_worker_ &&
        !job_.changed.wait_for(lock, std::chrono::seconds(10), [&] { return job_.worker_threads.size() >= 2; })) {
      throw Error("no chunk ran beside chunk 0: the pipeline ran one worker");
    }
    return static_cast<std::size_t>(c.in_len);
  }

 private:
  const ThreadRecordingJob& job_;
};

std::unique_ptr<ChunkWorker> ThreadRecordingJob::make_worker() const {
  ++workers_made;
  return std::make_unique<RecordThread>(*this);
}

// `count` chunks of `len` bytes, the last one marked.
class ListFeed final : public ChunkFeed {
 public:
  ListFeed(const Job& job, std::uint64_t count, std::uint64_t len) : job_(job), count_(count), len_(len) {}
  bool next(Slot& slot) override {
    if (exhausted()) return false;
    slot.prepare(job_, job_.chunk(fed_, len_, fed_ + 1 == count_));
    ++fed_;
    return true;
  }
  bool exhausted() const override { return fed_ == count_; }

 private:
  const Job& job_;
  std::uint64_t count_, len_, fed_ = 0;
};

class RecordingDrain final : public ChunkDrain {
 public:
  void put(Slot& slot) override {
    threads.insert(std::this_thread::get_id());
    bytes += slot.produced;
  }
  std::set<std::thread::id> threads;
  std::uint64_t bytes = 0;
};

// A stream that ends within its first chunk (a small file through a pipe) is
// transformed and written on the calling thread: starting a reader, a worker
// and a writer cost more than the chunk.
TEST(PipelineThreads, AJobOfOneChunkRunsOnTheCallingThread) {
  ThreadRecordingJob job;
  ListFeed feed(job, 1, 10);
  RecordingDrain drain;
  EXPECT_EQ(run_pipeline(job, feed, drain, 4, nullptr), 10u);
  EXPECT_EQ(job.worker_threads, std::set{std::this_thread::get_id()});
  EXPECT_EQ(drain.threads, std::set{std::this_thread::get_id()});
  EXPECT_EQ(drain.bytes, 10u);
}

// Several chunks: the workers run on threads of their own, more than one
// once the input pays for them (one per kMinBytesPerWorker read: four chunks
// of 1 MiB start up to four). Chunk 0 is held until a chunk ran on another
// worker, so the workers must be running at once, not one after another.
TEST(PipelineThreads, AJobOfSeveralChunksRunsItsWorkersOnThreadsOfTheirOwn) {
  ThreadRecordingJob job(kMinBytesPerWorker, true);
  ListFeed feed(job, 4, kMinBytesPerWorker);
  RecordingDrain drain;
  EXPECT_EQ(run_pipeline(job, feed, drain, 4, nullptr), 4 * kMinBytesPerWorker);
  EXPECT_GE(job.worker_threads.size(), 2u);
  EXPECT_EQ(job.worker_threads.count(std::this_thread::get_id()), 0u);
  EXPECT_EQ(drain.threads, std::set{std::this_thread::get_id()});  // the writer is the caller
  EXPECT_EQ(drain.bytes, 4 * kMinBytesPerWorker);
}

// A small stream of several chunks (under kMinBytesPerWorker) pays for one
// worker only, on a thread of its own.
TEST(PipelineThreads, AShortJobOfSeveralChunksRunsOneWorker) {
  ThreadRecordingJob job;
  ListFeed feed(job, 5, 16);
  RecordingDrain drain;
  EXPECT_EQ(run_pipeline(job, feed, drain, 4, nullptr), 80u);
  EXPECT_EQ(job.workers_made.load(), 1u) << "workers started that the input doesn't pay for";
  EXPECT_EQ(job.worker_threads.size(), 1u);
  EXPECT_EQ(job.worker_threads.count(std::this_thread::get_id()), 0u);
  EXPECT_EQ(drain.threads, std::set{std::this_thread::get_id()});
}

}  // namespace
}  // namespace paes
