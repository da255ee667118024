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

}  // namespace

std::uint64_t run_pipeline(const Job& job, ChunkFeed& feed, ChunkDrain& drain, unsigned workers,
                           const ProgressCallback& progress) {
  // A reader, a worker and a writer each hold a slot: three keep them all busy.
  std::vector<Slot> slots(slots_within_budget(job, 2 * static_cast<std::size_t>(workers) + 2, 3));
  workers = std::min(workers, static_cast<unsigned>(slots.size() - 2));

  // The first chunk is read here, before any thread exists. A stream that
  // ends within it (a small file through a pipe, the common case of a short
  // job) is transformed and written on the calling thread alone: a reader, a
  // worker and a writer cost more to start than one chunk takes.
  if (!feed.next(slots[0])) return 0;
  if (feed.exhausted()) {
    Slot& only = slots[0];
    only.produced = job.make_worker()->transform(only.chunk, only.data(), only.data());
    if (progress) progress(only.chunk.in_len);
    drain.put(only);
    return only.produced;
  }

  // One mutex guards the queues; each role waits on its own condition, and is
  // woken only when there is something for it: the reader when a slot is
  // freed, one worker per queued chunk, the writer when the chunk it waits for
  // is done. (One shared condition woke every thread for every event: ~16
  // futex calls per chunk, most of a pipe's system time.)
  std::mutex mutex;
  std::condition_variable slot_freed;     // the reader waits here
  std::condition_variable chunk_queued;   // the workers wait here
  std::condition_variable chunk_done;     // the writer waits here
  std::vector<std::size_t> free_slots;
  for (std::size_t i = 1; i < slots.size(); ++i) free_slots.push_back(i);
  std::deque<std::size_t> queued{0};  // the first chunk, read above
  std::map<std::uint64_t, std::size_t> finished;  // chunk index -> slot
  std::uint64_t chunks_read = 1;
  std::uint64_t next = 0;  // the chunk the writer waits for
  bool reading_done = false;
  bool stopped = false;
  FirstError error;

  // `order`: the chunk a worker failed on; the reader's and the writer's
  // failures have none (kNoChunk, after every chunk). Workers take chunks in
  // order, so the one on an earlier chunk is still at work when a later
  // chunk fails: its failure, captured after, is the one kept (a Tink
  // stream's wrong segment size is named by segment 0's failure, not
  // whichever worker lost the race).
  auto fail = [&](std::uint64_t order) {
    error.capture(order);
    {
      std::lock_guard lock(mutex);
      stopped = true;
    }
    slot_freed.notify_all();
    chunk_queued.notify_all();
    chunk_done.notify_all();
    feed.interrupt();
  };

  const auto worker_body = [&] {
    std::uint64_t chunk = kNoChunk;  // the one being transformed
    try {
      const auto worker = job.make_worker();
      for (;;) {
        std::size_t slot = 0;
        {
          std::unique_lock lock(mutex);
          chunk_queued.wait(lock, [&] { return stopped || !queued.empty() || reading_done; });
          if (stopped || queued.empty()) return;
          slot = queued.front();
          queued.pop_front();
        }
        Slot& s = slots[slot];
        chunk = s.chunk.index;
        s.produced = worker->transform(s.chunk, s.data(), s.data());
        chunk = kNoChunk;
        if (progress) progress(s.chunk.in_len);
        bool writer_waits_for_it = false;
        {
          std::lock_guard lock(mutex);
          finished.emplace(s.chunk.index, slot);
          writer_waits_for_it = s.chunk.index == next;
        }
        if (writer_waits_for_it) chunk_done.notify_one();
      }
    } catch (...) {
      fail(chunk);
    }
  };

  // The reader starts the workers as the input calls for them (one per
  // kMinBytesPerWorker read, as a file's job has): a short stream runs one
  // worker, however many it may have. Only the reader touches `pool` until
  // it is joined. Room for the workers first: once the reader runs, an
  // allocation that throws would destroy a running thread (std::terminate).
  // A worker that can't be started stops the job like any failure.
  std::vector<std::thread> pool;
  pool.reserve(workers);
  std::thread reader = start_thread("the reader thread", "", [&] {
    try {
      std::uint64_t bytes_read = slots[0].chunk.in_len;
      for (;;) {
        // Workers for what has been read, before waiting for the next read.
        const std::uint64_t wanted =
            std::clamp<std::uint64_t>(bytes_read / kMinBytesPerWorker, 1, std::uint64_t{workers});
        while (pool.size() < wanted) pool.push_back(start_thread("worker threads", " (try fewer threads)", worker_body));
        chunk_queued.notify_one();
        std::size_t slot = 0;
        {
          std::unique_lock lock(mutex);
          slot_freed.wait(lock, [&] { return stopped || !free_slots.empty(); });
          if (stopped) return;
          slot = free_slots.back();
          free_slots.pop_back();
        }
        const bool more = feed.next(slots[slot]);
        if (more) bytes_read += slots[slot].chunk.in_len;  // before a worker may take the slot
        {
          std::lock_guard lock(mutex);
          if (more) {
            queued.push_back(slot);
            ++chunks_read;
          } else {
            free_slots.push_back(slot);
            reading_done = true;
          }
        }
        if (!more) {
          chunk_queued.notify_all();  // idle workers end
          chunk_done.notify_one();    // the writer may have written the last chunk
          return;
        }
      }
    } catch (...) {
      fail(kNoChunk);
    }
  });

  std::uint64_t written = 0;
  try {
    std::unique_lock lock(mutex);
    for (;;) {
      chunk_done.wait(lock, [&] {
        return stopped || finished.count(next) != 0 || (reading_done && next == chunks_read);
      });
      const auto it = finished.find(next);
      if (stopped || it == finished.end()) break;
      const std::size_t slot = it->second;
      finished.erase(it);
      lock.unlock();
      drain.put(slots[slot]);
      written += slots[slot].produced;
      lock.lock();
      ++next;
      free_slots.push_back(slot);
      slot_freed.notify_one();
    }
  } catch (...) {
    fail(kNoChunk);
  }
  reader.join();
  for (auto& thread : pool) thread.join();
  error.rethrow();
  return written;
}

}  // namespace paes
