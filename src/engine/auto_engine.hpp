// --engine auto: a GPU when one is present and the job is worth it, else the
// threads engine. "Worth it": the mode and direction run on a GPU (ECB, CTR,
// CBC/CFB128 decryption), the input is a file or buffer of at least
// kAutoGpuMinBytes, and the device is a real GPU (a CPU OpenCL device such as
// PoCL never is). Below that size the copies to and from the device and the
// program build cost more than the cipher work they save. A GPU that fails
// to start or fails its AES self-test leaves the job to the threads engine,
// with a warning on stderr.
#pragma once

#include <memory>
#include <optional>

#include "engine/engines.hpp"

namespace paes {

inline constexpr std::uint64_t kAutoGpuMinBytes = std::uint64_t{256} << 20;

// Which engine auto runs a job on, given what this machine has.
EngineKind auto_engine_choice(const Job& job, std::uint64_t input_len, bool cuda_device, bool opencl_gpu);

class AutoEngine final : public Engine {
 public:
  AutoEngine(unsigned threads, std::optional<unsigned> device);
  EngineKind kind() const override { return chosen_; }
  unsigned workers_for(const Job& job, std::uint64_t input_len) const override;
  std::uint64_t run(const Job& job, Source& in, Sink& out) override;
  std::uint64_t run_stream(const Job& job, StreamReader& in, StreamWriter& out) override;

 private:
  Engine& pick(const Job& job, std::uint64_t input_len);
  unsigned threads_;
  std::optional<unsigned> device_;
  EngineKind chosen_ = EngineKind::threads;
  std::unique_ptr<Engine> engine_;
};

}  // namespace paes
