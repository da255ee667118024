// The threads engine (OpenMP and the ordered pipeline).
//
// Parallel jobs over files and memory (ECB, CTR, CBC/CFB decryption, sealed
// segments): the chunks are independent, so a team of workers takes them one
// at a time (dynamic schedule, so a worker stalled on I/O doesn't hold back the
// others). The team is no larger than workers_within_bytes allows (feed.hpp):
// a small job runs on the calling thread alone, with no team to start. Each worker has its own ChunkWorker and buffer; it preads its chunk
// (plus the bytes before it when the job needs them), transforms it in place
// and pwrites it at its own output offset. There is no shared queue and no
// ordering: the file offsets are the order, and reads and writes run in
// parallel like the cipher does. In memory, workers transform straight from
// the input span into the output span.
//
// Sequential jobs over files (CBC/CFB encryption, OFB) and every job over a
// stream run as the ordered pipeline of pipeline.cpp: a reader, the cipher
// workers (one for a sequential job, started as the input's size calls for
// them) and an in-order writer, with memory bounded by 2N + 2 chunks and by
// kMaxBytesInFlight (engine/feed.hpp).
//
// Errors: the exception of the lowest failed chunk is kept (FirstError), the
// other workers skip their remaining chunks, and run() rethrows it after the
// team ends.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <memory>

#include "engine/engines.hpp"
#include "engine/feed.hpp"
#include "engine/first_error.hpp"
#include "engine/pipeline.hpp"

namespace paes {

long openmp_version() { return _OPENMP; }

unsigned ThreadsEngine::workers_for(const Job& job, std::uint64_t input_len) const {
  if (!job.parallel()) return 1;
  return workers_within_bytes(threads_, job.chunk_count(input_len), input_len);
}

std::uint64_t ThreadsEngine::run(const Job& job, Source& in, Sink& out) {
  const ProgressCallback progress = [this](std::uint64_t bytes) { report(bytes); };
  const bool in_memory = in.in_memory() && out.in_memory();
  if (!job.parallel()) {
    if (in_memory) return run_in_order(job, in, out, progress);
    SourceFeed feed(job, in);
    SinkDrain drain(out);
    return run_pipeline(job, feed, drain, 1, progress);
  }
  const unsigned workers = workers_for(job, in.size());
  if (workers <= 1) return run_in_order(job, in, out, progress);
  const std::uint64_t count = job.chunk_count(in.size());
  return run_chunks_in_parallel(job, in, out, {0, count}, workers, progress);
}

std::uint64_t run_chunks_in_parallel(const Job& job, Source& in, Sink& out, ChunkRange range, unsigned workers,
                                     const ProgressCallback& progress) {
  const bool in_memory = in.in_memory() && out.in_memory();
  const std::uint64_t count = job.chunk_count(in.size());
  // Each worker over files holds one chunk buffer: no more of them than fit
  // the budget (memory workers transform in place of their views).
  if (!in_memory) workers = static_cast<unsigned>(slots_within_budget(job, workers, 1));
  workers = static_cast<unsigned>(std::clamp<std::uint64_t>(range.count, 1, workers));
  // Every worker is made before any chunk runs, and each goes as soon as its
  // thread has no chunk left: a GPU backend's worker holds a lane of the
  // device from the one moment to the other (so a device's lanes are all in
  // use while there is work for them, and free the moment there isn't).
  std::vector<std::unique_ptr<ChunkWorker>> chunk_workers(workers);
  for (auto& worker : chunk_workers) worker = job.make_worker();
  std::vector<Slot> slots(workers);
  std::atomic<std::uint64_t> written{0};
  FirstError error;

#pragma omp parallel num_threads(workers)
  {
    const auto w = static_cast<std::size_t>(omp_get_thread_num());
    // Workers of threads OpenMP didn't start go at once.
#pragma omp single nowait
    for (std::size_t unused = static_cast<std::size_t>(omp_get_num_threads()); unused < workers; ++unused) {
      chunk_workers[unused].reset();
    }
#pragma omp for schedule(dynamic, 1) nowait
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(range.count); ++i) {
      // Chunks after a failed one are skipped; one before it still runs, as
      // its worker may have claimed it before the failure.
      if (error.failed_before(static_cast<std::uint64_t>(i))) continue;
      try {
        const Chunk c = chunk_of(job, in.size(), count, range.first + static_cast<std::uint64_t>(i));
        if (in_memory) {
          written += transform_in_memory(job, *chunk_workers[w], c, in, out);
        } else {
          Slot& slot = slots[w];
          read_chunk(job, in, c, slot);
          slot.produced = chunk_workers[w]->transform(c, slot.data(), slot.data());
          out.write_at(c.out_offset, {slot.data(), slot.produced});
          written += slot.produced;
        }
        if (progress) progress(c.in_len);
      } catch (...) {
        // Chunks are claimed in order and none before a failed one is
        // skipped: the lowest index kept is the job's first bad chunk.
        error.capture(static_cast<std::uint64_t>(i));
      }
    }
    chunk_workers[w].reset();
  }
  error.rethrow();
  return written.load();
}

std::uint64_t ThreadsEngine::run_stream(const Job& job, StreamReader& in, StreamWriter& out) {
  StreamFeed feed(job, in);
  StreamDrain drain(out);
  return run_pipeline(job, feed, drain, job.parallel() ? threads_ : 1,
                      [this](std::uint64_t bytes) { report(bytes); });
}

}  // namespace paes
