// What the front doors (transform.cpp, sealed.cpp) share: an engine that
// counts the input bytes its chunks consumed (a stream's length is known only
// once it has been read) and forwards them to the caller's progress callback,
// and the timing of the whole call.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>

#include "paes/endpoint.hpp"
#include "paes/engine.hpp"
#include "paes/transform.hpp"

namespace paes {

// The chunk length of a raw job: `requested`, or, where the caller left it to
// paes (kAutoChunkLen) and the threads engine (or auto) runs an input of known
// length, ChunkPlan::fitted_chunk_len for `threads` workers (0: every CPU).
std::uint64_t chunk_len_for(Mode mode, std::uint64_t requested, EngineKind engine, unsigned threads,
                            std::optional<std::uint64_t> input_len);

// How the front doors open their output (TransformOptions::output_mode).
OutputOptions output_options(const TransformOptions& options, Direction direction, const InputEndpoint& in);

class JobRunner {
 public:
  explicit JobRunner(const TransformOptions& options);
  Engine& engine() { return *engine_; }
  // chunk_len_for() the job over `in` after `in_skip` bytes on this engine.
  std::uint64_t chunk_len_for(Mode mode, std::uint64_t requested, const InputEndpoint& in,
                              std::uint64_t in_skip) const;
  // Runs the job and fills the report's byte counts, workers and seconds.
  // `input_len` is the job's input length when known (files), for workers.
  void run(const Job& job, InputEndpoint& in, std::uint64_t in_skip, OutputEndpoint& out,
           std::uint64_t out_skip, TransformReport& report);

 private:
  std::unique_ptr<Engine> engine_;
  unsigned threads_;
  std::shared_ptr<std::atomic<std::uint64_t>> consumed_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace paes
