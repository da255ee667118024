// The ordered pipeline, pigz's design: one reader thread, N cipher workers and
// one in-order writer (the calling thread), over a fixed ring of 2N + 2 slots.
// The reader starts the workers as the input grows, one per kMinBytesPerWorker
// (feed.hpp), up to N: a short stream pays for one worker thread, not N.
//
//   reader:  takes a free slot, fills it with the next chunk's input (the feed
//            decides how: pread from a file, or read a stream and find its
//            end), and queues it for the workers;
//   workers: each takes the oldest queued slot and transforms it in place with
//            its own ChunkWorker;
//   writer:  waits for the slot that holds the next chunk in order, writes it
//            (the drain decides how: pwrite at its offset, or append to a
//            stream), and frees the slot.
//
// The calling thread reads the first chunk before any thread starts; a stream
// that ends within it is transformed and written right there, with no thread.
//
// Memory stays at 2N + 2 chunks whatever the input size (fewer chunks, and as
// many fewer workers, where that would pass kMaxBytesInFlight), every chunk is
// written only after its worker finished with it, and the output order is the
// input order. A sequential job runs with one worker, so its chunks are also
// transformed in order and it overlaps reading, the cipher and writing.
// The first error of any stage stops all of them and is rethrown; a reader
// waiting on a stalled stream is interrupted rather than waited for.
#include "engine/pipeline.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "engine/first_error.hpp"
#include "paes/error.hpp"

namespace paes {
namespace {

constexpr std::uint64_t kNoChunk = UINT64_MAX;

// A thread, or an Error that says which (and `hint`, what to do): threads
// can run out (ulimit -u, no address space left for their stacks).
template <class Body>
std::thread start_thread(const char* what, const char* hint, Body&& body) {
  try {
    return std::thread(std::forward<Body>(body));
  } catch (const std::system_error& e) {
    throw Error(std::string("starting ") + what + ": " + e.what() + hint);
  }
}

// One run of the pipeline. Its stages, each a method:
//   run_alone:         the first chunk, when it is the whole input;
//   read_chunks:       the reader thread (it also starts the workers);
//   transform_chunks:  each worker thread;
//   write_in_order:    the writer, the calling thread;
//   fail:              any stage's error, which stops them all.
// A slot belongs to one stage at a time: the reader while in free_slots_ or
// being filled, a worker once taken from queued_, the writer once in
// finished_; it passes from one to the next under mutex_, so its bytes are
// touched without the lock.
class Pipeline {
 public:
  Pipeline(const Job& job, ChunkFeed& feed, ChunkDrain& drain, unsigned workers,
           const ProgressCallback& progress)
      : job_(job),
        feed_(feed),
        drain_(drain),
        progress_(progress),
        // A reader, a worker and a writer each hold a slot: three keep them all busy.
        slots_(slots_within_budget(job, 2 * static_cast<std::size_t>(workers) + 2, 3)),
        workers_(std::min(workers, static_cast<unsigned>(slots_.size() - 2))) {}

  std::uint64_t run();

 private:
  std::uint64_t run_alone();
  void read_chunks();
  void start_workers_for(std::uint64_t bytes_read);
  bool take_free_slot(std::size_t& slot);
  void transform_chunks();
  bool take_queued_slot(std::size_t& slot);
  void hand_to_writer(std::size_t slot);
  std::uint64_t write_in_order();
  void fail(std::uint64_t order);

  const Job& job_;
  ChunkFeed& feed_;    // next(): the reader (and run, before any thread); interrupt(): fail
  ChunkDrain& drain_;  // called by the writer (and by run_alone)
  const ProgressCallback& progress_;  // called by the workers (and by run_alone)
  std::vector<Slot> slots_;  // the ring; which stage holds a slot: above the class
  const unsigned workers_;   // the most worker threads

  // One mutex guards the queues; each role waits on its own condition, and is
  // woken only when there is something for it: the reader when a slot is
  // freed, one worker per queued chunk, the writer when the chunk it waits for
  // is done. (One shared condition woke every thread for every event: ~16
  // futex calls per chunk, most of a pipe's system time.)
  std::mutex mutex_;
  std::condition_variable slot_freed_;    // the reader waits here
  std::condition_variable chunk_queued_;  // the workers wait here
  std::condition_variable chunk_done_;    // the writer waits here
  // Guarded by mutex_, the seven below (run sets the first ones before any thread starts):
  // free_slots_: the writer pushes (and the reader its last, unfilled slot), the reader pops.
  std::vector<std::size_t> free_slots_;
  std::deque<std::size_t> queued_;                // the reader pushes, the workers pop
  std::map<std::uint64_t, std::size_t> finished_;  // chunk index -> slot: the workers add, the writer takes
  std::uint64_t chunks_read_ = 0;  // the reader writes, the writer reads
  std::uint64_t next_ = 0;         // the chunk the writer waits for: the writer writes, the workers read
  bool reading_done_ = false;      // the reader sets it; the workers and the writer read it
  bool stopped_ = false;           // fail sets it; every stage reads it
  FirstError error_;  // its own lock: every stage captures, run rethrows
  // Only the reader touches pool_ until run joins it.
  std::vector<std::thread> pool_;
};

std::uint64_t Pipeline::run() {
  // The first chunk is read here, before any thread exists. A stream that
  // ends within it (a small file through a pipe, the common case of a short
  // job) is transformed and written on the calling thread alone: a reader, a
  // worker and a writer cost more to start than one chunk takes.
  if (!feed_.next(slots_[0])) return 0;
  if (feed_.exhausted()) return run_alone();

  for (std::size_t i = 1; i < slots_.size(); ++i) free_slots_.push_back(i);
  queued_.push_back(0);  // the first chunk, read above
  chunks_read_ = 1;

  // The reader starts the workers as the input calls for them (one per
  // kMinBytesPerWorker read, as a file's job has): a short stream runs one
  // worker, however many it may have. Room for the workers first: once the
  // reader runs, an allocation that throws would destroy a running thread
  // (std::terminate). A worker that can't be started stops the job like any
  // failure.
  pool_.reserve(workers_);
  std::thread reader = start_thread("the reader thread", "", [this] { read_chunks(); });
  const std::uint64_t written = write_in_order();
  reader.join();
  for (auto& thread : pool_) thread.join();
  error_.rethrow();
  return written;
}

std::uint64_t Pipeline::run_alone() {
  Slot& only = slots_[0];
  only.produced = job_.make_worker()->transform(only.chunk, only.data(), only.data());
  if (progress_) progress_(only.chunk.in_len);
  drain_.put(only);
  return only.produced;
}

// `order`: the chunk a worker failed on; the reader's and the writer's
// failures have none (kNoChunk, after every chunk). Workers take chunks in
// order, so the one on an earlier chunk is still at work when a later
// chunk fails: its failure, captured after, is the one kept (a Tink
// stream's wrong segment size is named by segment 0's failure, not
// whichever worker lost the race).
void Pipeline::fail(std::uint64_t order) {
  error_.capture(order);
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  slot_freed_.notify_all();
  chunk_queued_.notify_all();
  chunk_done_.notify_all();
  feed_.interrupt();
}

// The reader thread: fills free slots from the feed and queues them.
void Pipeline::read_chunks() {
  try {
    std::uint64_t bytes_read = slots_[0].chunk.in_len;
    for (;;) {
      // Workers for what has been read, before waiting for the next read.
      start_workers_for(bytes_read);
      chunk_queued_.notify_one();
      std::size_t slot = 0;
      if (!take_free_slot(slot)) return;
      const bool more = feed_.next(slots_[slot]);
      if (more) bytes_read += slots_[slot].chunk.in_len;  // before a worker may take the slot
      {
        std::lock_guard lock(mutex_);
        if (more) {
          queued_.push_back(slot);
          ++chunks_read_;
        } else {
          free_slots_.push_back(slot);
          reading_done_ = true;
        }
      }
      if (!more) {
        chunk_queued_.notify_all();  // idle workers end
        chunk_done_.notify_one();    // the writer may have written the last chunk
        return;
      }
    }
  } catch (...) {
    fail(kNoChunk);
  }
}

void Pipeline::start_workers_for(std::uint64_t bytes_read) {
  const std::uint64_t wanted =
      std::clamp<std::uint64_t>(bytes_read / kMinBytesPerWorker, 1, std::uint64_t{workers_});
  while (pool_.size() < wanted) {
    pool_.push_back(start_thread("worker threads", " (try fewer threads)", [this] { transform_chunks(); }));
  }
}

// False once the pipeline stopped.
bool Pipeline::take_free_slot(std::size_t& slot) {
  std::unique_lock lock(mutex_);
  slot_freed_.wait(lock, [&] { return stopped_ || !free_slots_.empty(); });
  if (stopped_) return false;
  slot = free_slots_.back();
  free_slots_.pop_back();
  return true;
}

// A worker thread: transforms queued slots in place until none is left.
void Pipeline::transform_chunks() {
  std::uint64_t chunk = kNoChunk;  // the one being transformed
  try {
    const auto worker = job_.make_worker();
    std::size_t slot = 0;
    while (take_queued_slot(slot)) {
      Slot& s = slots_[slot];
      chunk = s.chunk.index;
      s.produced = worker->transform(s.chunk, s.data(), s.data());
      chunk = kNoChunk;
      if (progress_) progress_(s.chunk.in_len);
      hand_to_writer(slot);
    }
  } catch (...) {
    fail(chunk);
  }
}

// False once the pipeline stopped, or the input ended and nothing is queued.
bool Pipeline::take_queued_slot(std::size_t& slot) {
  std::unique_lock lock(mutex_);
  chunk_queued_.wait(lock, [&] { return stopped_ || !queued_.empty() || reading_done_; });
  if (stopped_ || queued_.empty()) return false;
  slot = queued_.front();
  queued_.pop_front();
  return true;
}

void Pipeline::hand_to_writer(std::size_t slot) {
  const std::uint64_t index = slots_[slot].chunk.index;
  bool writer_waits_for_it = false;
  {
    std::lock_guard lock(mutex_);
    finished_.emplace(index, slot);
    writer_waits_for_it = index == next_;
  }
  if (writer_waits_for_it) chunk_done_.notify_one();
}

// The writer, on the calling thread: drains finished slots in chunk order
// and frees them. Returns the bytes written.
std::uint64_t Pipeline::write_in_order() {
  std::uint64_t written = 0;
  try {
    std::unique_lock lock(mutex_);
    for (;;) {
      chunk_done_.wait(lock, [&] {
        return stopped_ || finished_.count(next_) != 0 || (reading_done_ && next_ == chunks_read_);
      });
      const auto it = finished_.find(next_);
      if (stopped_ || it == finished_.end()) break;
      const std::size_t slot = it->second;
      finished_.erase(it);
      lock.unlock();
      drain_.put(slots_[slot]);
      written += slots_[slot].produced;
      lock.lock();
      ++next_;
      free_slots_.push_back(slot);
      slot_freed_.notify_one();
    }
  } catch (...) {
    fail(kNoChunk);
  }
  return written;
}

}  // namespace

std::uint64_t run_pipeline(const Job& job, ChunkFeed& feed, ChunkDrain& drain, unsigned workers,
                           const ProgressCallback& progress) {
  return Pipeline(job, feed, drain, workers, progress).run();
}

}  // namespace paes
