#pragma once

#include <vector>

#include "paes/engine.hpp"

namespace paes {

// Ranks x threads over MPI-IO (see the comment at the top of mpi_engine.cpp).
// run() is called on rank 0 by the front door; the other ranks join through
// MpiSession::serve().
class MpiEngine final : public Engine {
 public:
  explicit MpiEngine(unsigned threads_per_rank);
  EngineKind kind() const override { return EngineKind::mpi; }
  // Threads of all ranks in the last run (1 for a sequential job).
  unsigned workers_for(const Job& job, std::uint64_t input_len) const override;
  std::uint64_t run(const Job& job, Source& in, Sink& out) override;
  std::uint64_t run_stream(const Job& job, StreamReader& in, StreamWriter& out) override;
  std::vector<RankTiming> rank_timings() const override { return timings_; }

 private:
  unsigned threads_;
  std::vector<RankTiming> timings_;
};

}  // namespace paes
