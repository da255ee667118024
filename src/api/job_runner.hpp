// What the front doors (transform.cpp, sealed.cpp) share: an engine that
// counts the input bytes its chunks consumed (a stream's length is known only
// once it has been read) and forwards them to the caller's progress callback,
// and the timing of the whole call.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "cipher/backend.hpp"
#include "paes/endpoint.hpp"
#include "paes/engine.hpp"
#include "paes/transform.hpp"

namespace paes {

// The backend a raw job runs on: auto's GPU verdict under auto with
// gpu_where_faster (choose_auto_backend, its reason in `why`), else what
// options.backend resolves to (raw_backend).
const CipherBackend& raw_backend_for(const CipherSpec& spec, const TransformOptions& options,
                                     std::optional<std::uint64_t> input_len, std::string& why);

// The plan of a raw job on an input of `input_len` bytes (none: a stream):
// its backend (raw_backend_for) and its chunk length
// (ChunkPlan::decide_chunk_len, fitted to the threads engine's workers
// where the length is known).
ChunkPlan raw_plan_for(const CipherSpec& spec, const TransformOptions& options, std::optional<std::uint64_t> input_len,
                       std::string& why);

// How the front doors open their output (TransformOptions::output_mode).
OutputOptions output_options(const TransformOptions& options, Direction direction, const InputEndpoint& in);

class JobRunner {
 public:
  explicit JobRunner(const TransformOptions& options);
  Engine& engine() { return *engine_; }
  // The plan of a raw job over `in` after `in_skip` bytes (raw_plan_for).
  ChunkPlan plan_for(const CipherSpec& spec, const InputEndpoint& in, std::uint64_t in_skip);
  // Runs the job and fills the report's byte counts, workers and seconds.
  // `input_len` is the job's input length when known (files), for workers.
  void run(const Job& job, InputEndpoint& in, std::uint64_t in_skip, OutputEndpoint& out,
           std::uint64_t out_skip, TransformReport& report);

 private:
  TransformOptions options_;
  std::unique_ptr<Engine> engine_;
  std::string backend_choice_;  // why auto chose the raw job's backend
  std::shared_ptr<std::atomic<std::uint64_t>> consumed_;  // the job's input bytes (decoded, if armored)
  std::shared_ptr<std::atomic<bool>> progress_in_text_;  // options.progress counts an armored input's text
  std::chrono::steady_clock::time_point start_;
};

}  // namespace paes
