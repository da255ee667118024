// --engine auto: a GPU where it was measured faster than the threads engine
// for this kind of job on this machine, else the threads engine.
//
// A GPU is considered when the mode and direction run on one (ECB, CTR,
// CBC/CFB128 decryption), the input is a file or buffer of at least
// kAutoGpuMinBytes (below that, starting a device costs more than it could
// save) and the device is a real GPU (a CPU OpenCL device such as PoCL never
// is). The first such job on a machine looks for a GPU (CUDA first, OpenCL
// only where CUDA has none), starts it, and measures in memory on
// kAutoProbeBytes the GPU engine's rate with its transfers and the threads
// engine's with this run's threads (the file I/O is the same for both). What
// it found is kept (engine/rate_cache.hpp) under a fingerprint of the GPU
// stack (engine/gpu_stack.hpp), so later jobs decide without starting any
// driver: they run the GPU only where it is predicted faster for their size,
// its start-up included. `-v` says what auto chose and why. A GPU that fails
// to start, its AES self-test or the measurement leaves the job to the threads
// engine, with a warning (paes/notice.hpp; the paes tool prints it on stderr).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "engine/engines.hpp"
#include "engine/rate_cache.hpp"

namespace paes {

inline constexpr std::size_t kAutoProbeBytes = std::size_t{64} << 20;

// The GPU engine auto considers for a job, given what this machine has; the
// threads engine where there is none to consider.
EngineKind auto_engine_choice(const Job& job, std::uint64_t input_len, bool cuda_device, bool opencl_gpu);

// Whether kept rates send a job of `len` bytes to the GPU: only where it is
// predicted faster, the seconds it takes to start included unless it already
// runs (it was just started to be measured). A tie stays on the CPU.
bool gpu_predicted_faster(const MeasuredRates& rates, std::uint64_t len, bool started);

// The least input that kept rates send to the GPU (kAutoGpuMinBytes at
// least); none where the CPU is at least as fast at any length.
std::optional<std::uint64_t> gpu_from_bytes(const MeasuredRates& rates);

// The cache key of a kind of job on this machine as it is now.
std::string auto_rate_key(const CipherSpec& spec, unsigned threads, std::optional<unsigned> device);

class AutoEngine final : public Engine {
 public:
  AutoEngine(unsigned threads, std::optional<unsigned> device);
  EngineKind kind() const override { return chosen_; }
  unsigned workers_for(const Job& job, std::uint64_t input_len) const override;
  std::uint64_t run(const Job& job, Source& in, Sink& out) override;
  std::uint64_t run_stream(const Job& job, StreamReader& in, StreamWriter& out) override;
  std::string choice() const override { return choice_; }
  std::optional<PipelineTimes> pipeline_times() const override {
    return engine_ ? engine_->pipeline_times() : std::nullopt;
  }

 private:
  // `input_len`: none for a stream, whose length is unknown.
  Engine& pick(const Job& job, std::optional<std::uint64_t> input_len);
  void choose_by_kept_rates(const MeasuredRates& kept, std::uint64_t len);
  void look_and_measure(const Job& job, std::uint64_t len, unsigned threads, RateCache& cache);
  std::string keep(RateCache& cache, const CipherSpec& spec, unsigned threads, const MeasuredRates& found);
  bool on_device(EngineKind gpu, const std::function<void()>& work);
  bool start_gpu(EngineKind gpu);
  unsigned threads_;
  std::optional<unsigned> device_;
  EngineKind chosen_ = EngineKind::threads;
  std::string choice_;
  std::unique_ptr<Engine> engine_;
};

}  // namespace paes
