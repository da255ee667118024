#include "engine/auto_engine.hpp"

#include <iostream>

#include "gpu/gpu_modes.hpp"
#include "paes/error.hpp"

namespace paes {
namespace {

bool gpu_worthy(const Job& job, std::uint64_t input_len) {
  const CipherSpec* spec = job.raw_spec();
  return spec && input_len >= kAutoGpuMinBytes && gpu::runs_on_gpu(*spec);
}

bool has_cuda_device() { return !list_gpu_devices(EngineKind::cuda).empty(); }

bool has_opencl_gpu() {
  for (const GpuDevice& device : list_gpu_devices(EngineKind::opencl)) {
    if (device.type == "gpu") return true;
  }
  return false;
}

}  // namespace

EngineKind auto_engine_choice(const Job& job, std::uint64_t input_len, bool cuda_device, bool opencl_gpu) {
  if (!gpu_worthy(job, input_len)) return EngineKind::threads;
  if (cuda_device) return EngineKind::cuda;
  if (opencl_gpu) return EngineKind::opencl;
  return EngineKind::threads;
}

AutoEngine::AutoEngine(unsigned threads, std::optional<unsigned> device) : threads_(threads), device_(device) {}

Engine& AutoEngine::pick(const Job& job, std::uint64_t input_len) {
  // Devices are only probed when the job could use one: small jobs never
  // pay for a driver's start-up.
  const bool worthy = gpu_worthy(job, input_len);
  chosen_ = worthy ? auto_engine_choice(job, input_len, has_cuda_device(), has_opencl_gpu()) : EngineKind::threads;
  engine_.reset();
  if (chosen_ != EngineKind::threads) {
    // Auto promises the best engine that gives correct bytes, so a GPU that
    // can't start, or fails its AES self-test, leaves the job to the CPU. An
    // explicit --engine opencl|cuda fails instead: the user asked for that
    // device. A device that fails a per-batch check later fails the run
    // either way (some output exists by then).
    try {
      engine_ = make_started_gpu_engine(chosen_, threads_, device_);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::usage) throw;
      std::cerr << "paes: warning: " << e.what()
                << "\npaes: warning: --engine auto runs this job on the CPU (threads engine) instead\n";
      chosen_ = EngineKind::threads;
    }
  }
  if (!engine_) engine_ = make_engine(EngineKind::threads, threads_);
  engine_->on_progress([this](std::uint64_t bytes) { report(bytes); });
  return *engine_;
}

unsigned AutoEngine::workers_for(const Job& job, std::uint64_t input_len) const {
  return engine_ ? engine_->workers_for(job, input_len) : 1;
}

std::uint64_t AutoEngine::run(const Job& job, Source& in, Sink& out) {
  return pick(job, in.size()).run(job, in, out);
}

std::uint64_t AutoEngine::run_stream(const Job& job, StreamReader& in, StreamWriter& out) {
  return pick(job, 0).run_stream(job, in, out);
}

}  // namespace paes
