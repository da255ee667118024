// What the front doors (transform.cpp, sealed.cpp) share: an engine that
// counts the input bytes its chunks consumed (a stream's length is known only
// once it has been read) and forwards them to the caller's progress callback,
// and the timing of the whole call.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

#include "paes/endpoint.hpp"
#include "paes/engine.hpp"
#include "paes/transform.hpp"

namespace paes {

// How the front doors open their output (TransformOptions::output_mode).
OutputOptions output_options(const TransformOptions& options, Direction direction, const InputEndpoint& in);

class JobRunner {
 public:
  explicit JobRunner(const TransformOptions& options);
  Engine& engine() { return *engine_; }
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
