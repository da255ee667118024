// --engine auto: a GPU where it was measured faster than the threads engine
// for this kind of job on this machine, else the threads engine.
//
// A GPU is considered when the mode and direction run on one (ECB, CTR,
// CBC/CFB128 decryption), the input is a file or buffer of at least
// kAutoGpuMinBytes (below that, starting a device costs more than it could
// save) and the device is a real GPU (a CPU OpenCL device such as PoCL never
// is). Then auto compares two rates, in memory: the GPU engine's with its
// transfers, and the threads engine's with this run's threads (the file I/O
// is the same for both). They are measured on kAutoProbeBytes the first time
// such a job runs on this machine and kept (engine/rate_cache.hpp); auto
// starts the GPU only when its rate is higher. `-v` says what it chose and
// why. A GPU that fails to start, its AES self-test or the measurement
// leaves the job to the threads engine, with a warning on stderr.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "engine/engines.hpp"
#include "engine/rate_cache.hpp"

namespace paes {

inline constexpr std::uint64_t kAutoGpuMinBytes = std::uint64_t{256} << 20;
inline constexpr std::size_t kAutoProbeBytes = std::size_t{64} << 20;

// The GPU engine auto considers for a job, given what this machine has; the
// threads engine where there is none to consider.
EngineKind auto_engine_choice(const Job& job, std::uint64_t input_len, bool cuda_device, bool opencl_gpu);

// Whether measured rates send a job to the GPU: only where it was faster.
inline bool gpu_measured_faster(const MeasuredRates& rates) { return rates.gpu_bytes_per_s > rates.cpu_bytes_per_s; }

class AutoEngine final : public Engine {
 public:
  AutoEngine(unsigned threads, std::optional<unsigned> device);
  EngineKind kind() const override { return chosen_; }
  unsigned workers_for(const Job& job, std::uint64_t input_len) const override;
  std::uint64_t run(const Job& job, Source& in, Sink& out) override;
  std::uint64_t run_stream(const Job& job, StreamReader& in, StreamWriter& out) override;
  std::string choice() const override { return choice_; }

 private:
  Engine& pick(const Job& job, std::uint64_t input_len);
  void start_gpu_if_faster(const CipherSpec& spec);
  unsigned threads_;
  std::optional<unsigned> device_;
  EngineKind chosen_ = EngineKind::threads;
  std::string choice_;
  std::unique_ptr<Engine> engine_;
};

}  // namespace paes
