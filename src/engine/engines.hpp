// The concrete engines; callers reach them through make_engine().
#pragma once

#include <memory>
#include <optional>

#include "paes/engine.hpp"

namespace paes {

class SerialEngine final : public Engine {
 public:
  EngineKind kind() const override { return EngineKind::serial; }
  unsigned workers_for(const Job&, std::uint64_t) const override { return 1; }
  std::uint64_t run(const Job& job, Source& in, Sink& out) override;
  std::uint64_t run_stream(const Job& job, StreamReader& in, StreamWriter& out) override;
};

class ThreadsEngine final : public Engine {
 public:
  explicit ThreadsEngine(unsigned threads) : threads_(threads) {}
  EngineKind kind() const override { return EngineKind::threads; }
  unsigned workers_for(const Job& job, std::uint64_t input_len) const override;
  std::uint64_t run(const Job& job, Source& in, Sink& out) override;
  std::uint64_t run_stream(const Job& job, StreamReader& in, StreamWriter& out) override;

 private:
  unsigned threads_;
};

// Chunks [first, first + count) of a parallel job, by `workers` threads at
// once: the threads engine's path over files and memory (see the comment at
// the top of threads_engine.cpp), and each MPI rank's over its own range.
// Returns the bytes written.
struct ChunkRange {
  std::uint64_t first = 0;
  std::uint64_t count = 0;
};
std::uint64_t run_chunks_in_parallel(const Job& job, Source& in, Sink& out, ChunkRange range, unsigned workers,
                                     const ProgressCallback& progress);

// Shared by both engines: every chunk in order on the calling thread. Memory
// inputs and outputs are transformed in place of their views, without copies.
std::uint64_t run_in_order(const Job& job, Source& in, Sink& out, const ProgressCallback& progress);
// Transforms one chunk of an in-memory input straight into an in-memory output.
std::size_t transform_in_memory(const Job& job, ChunkWorker& worker, const Chunk& c, Source& in,
                                Sink& out);

// The mpi engine lives in libpaes_mpi (with the paes-mpi tool), so that a
// process that doesn't ask for it never loads an MPI library. Starting an
// MpiSession registers its maker here; until then make_engine(mpi) refuses.
using MpiEngineMaker = std::unique_ptr<Engine> (*)(unsigned threads_per_rank);
void register_mpi_engine(MpiEngineMaker make);

}  // namespace paes
