// The threads engine (OpenMP).
//
// Parallel plans (ECB, CTR, CBC/CFB decryption): the chunks are independent, so
// a team of workers takes them one at a time (dynamic schedule, so a worker
// stalled on I/O doesn't hold back the others). Each worker has its own
// ChunkCipher and buffer; it preads its chunk (plus the 16 bytes before it when
// the mode needs them), transforms it in place and pwrites it at the same
// offset. There is no shared queue and no ordering: the file offsets are the
// order, and reads and writes run in parallel like the cipher does.
//
// Sequential plans (CBC/CFB encryption, OFB): the mathematics allows one cipher
// thread only, so the job runs as a three-stage pipeline instead: a reader
// thread fills buffers, the calling thread transforms them in order with one
// cipher context, a writer thread writes them out, with four buffers in
// rotation. The cipher never waits on a read or a write unless the disk is
// slower than AES, and output is the standard ciphertext.
//
// In-memory jobs skip all buffers: workers transform straight from the input
// span into the output span.
//
// Errors: the first exception of any worker is kept (FirstError), the other
// workers skip their remaining chunks, and run() rethrows it after the team ends.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <memory>

#include "engine/chunk_runner.hpp"
#include "engine/engines.hpp"
#include "engine/pipeline.hpp"

namespace paes {

unsigned ThreadsEngine::workers_for(const ChunkPlan& plan) const {
  if (!plan.parallel()) return 1;
  return static_cast<unsigned>(std::min<std::uint64_t>(threads_, plan.chunk_count()));
}

std::uint64_t ThreadsEngine::run(const CipherSpec& spec, const ChunkPlan& plan, Source& in,
                                 Sink& out) {
  const unsigned workers = workers_for(plan);
  if (!plan.parallel() && !(in.in_memory() && out.in_memory())) {
    ChunkCipher cipher(spec);
    return run_pipelined(plan, cipher, in, out);
  }
  if (workers <= 1) return SerialEngine().run(spec, plan, in, out);

  std::vector<std::unique_ptr<ChunkCipher>> ciphers(workers);
  std::vector<std::vector<std::uint8_t>> scratch(workers);
  std::atomic<std::uint64_t> written{0};
  FirstError error;
  const auto chunks = static_cast<std::int64_t>(plan.chunk_count());

#pragma omp parallel for num_threads(workers) schedule(dynamic, 1)
  for (std::int64_t i = 0; i < chunks; ++i) {
    if (error.failed()) continue;
    const auto worker = static_cast<std::size_t>(omp_get_thread_num());
    try {
      if (!ciphers[worker]) ciphers[worker] = std::make_unique<ChunkCipher>(spec);
      written += run_chunk(plan, plan.chunk(static_cast<std::uint64_t>(i)), *ciphers[worker], in,
                           out, scratch[worker]);
    } catch (...) {
      error.capture();
    }
  }
  error.rethrow();
  return written.load();
}

}  // namespace paes
