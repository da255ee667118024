// Who runs a job's chunks. An engine knows nothing of modes' or formats'
// mathematics: it asks the job for chunk geometry and workers, and moves
// bytes between threads, files and streams.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "paes/io.hpp"
#include "paes/job.hpp"

namespace paes {

// Engines split the work; cipher backends (paes/backend.hpp) compute AES,
// each job on the backend it was made with.
enum class EngineKind { serial, threads, mpi };

std::string_view engine_name(EngineKind kind);
std::optional<EngineKind> parse_engine(std::string_view name);
// The engines this build contains, in the order `paes info` lists them.
std::string_view compiled_engines();

// Throws the usage Error that refuses streams (stdin, stdout, pipes) to an
// engine that can't run them: mpi, whose ranks each open the input and output
// files themselves. Returns for every other engine. The mpi engine's
// run_stream throws the same Error; a caller may check first, before it
// reads a key or opens anything.
void check_streams(EngineKind kind);

// Told the input bytes of each finished chunk, from any worker thread.
using ProgressCallback = std::function<void(std::uint64_t)>;

class Engine {
 public:
  virtual ~Engine() = default;
  virtual EngineKind kind() const = 0;
  // Workers that run cipher work for the job on an input of this length.
  virtual unsigned workers_for(const Job& job, std::uint64_t input_len) const = 0;
  // Transforms the whole of `in` into `out` and returns the output length.
  // Throws Error on the first failure of any chunk; `out` may then hold
  // partial data, which the caller must discard.
  virtual std::uint64_t run(const Job& job, Source& in, Sink& out) = 0;
  // The same for a stream read front to back and written in order. Each
  // chunk's output is written only after its worker finished it (for the
  // sealed format: after it verified). Returns the output length.
  virtual std::uint64_t run_stream(const Job& job, StreamReader& in, StreamWriter& out) = 0;

  void on_progress(ProgressCallback callback) { progress_ = std::move(callback); }

  // Per-process timings of the last run: one entry per MPI rank for the mpi
  // engine, none for the others.
  struct RankTiming {
    double compute_seconds = 0;  // its range: reading, cipher and writing, overlapped
    double io_seconds = 0;       // opening the files, and making its writes durable
    std::uint64_t bytes_in = 0;
    unsigned threads = 0;
    std::string backend;              // what ran its AES (a backend's name)
    std::optional<unsigned> device;   // the GPU backend's device it ran on
  };
  virtual std::vector<RankTiming> rank_timings() const { return {}; }

 protected:
  void report(std::uint64_t bytes) const {
    if (progress_) progress_(bytes);
  }

 private:
  ProgressCallback progress_;
};

// threads = 0 means one per online CPU (per rank for mpi: the node's CPUs
// over its ranks). The serial engine ignores it. mpi needs an MpiSession. Throws a usage Error for an engine this build doesn't have.
std::unique_ptr<Engine> make_engine(EngineKind kind, unsigned threads = 0);

unsigned online_cpus();

// The OpenMP version the threads engine was compiled for (_OPENMP, a date:
// 201511 is OpenMP 4.5), for `paes info`.
long openmp_version();

}  // namespace paes
