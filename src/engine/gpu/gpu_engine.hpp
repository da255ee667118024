// The opencl and cuda engines: a GPU driver (OpenClEngine, CudaEngine, both
// a GpuDriver: engine/gpu/gpu_driver.hpp) behind the Engine interface.
//
// A GPU runs the raw modes whose blocks are independent (ECB, CTR, and CBC
// and CFB128 decryption) on the whole input, through the driver's pipeline:
// files are read straight into page-locked memory and written from it while
// other batches are on the device. What a GPU doesn't run (sequential
// directions, CFB8/CFB1, the sealed format's AES-GCM) goes to the threads
// engine, with a one-line note saying so: the bytes are the same either way.
// Streams from pipes go through the same pipeline, filled as input comes.
#pragma once

#include <memory>
#include <optional>

#include "engine/engines.hpp"
#include "paes/notice.hpp"

namespace paes {

template <class Backend, class Options>
class GpuEngine final : public Engine {
 public:
  GpuEngine(EngineKind kind, Options options, unsigned cpu_threads)
      : kind_(kind), options_(options), cpu_(cpu_threads) {}

  // The engine that runs the job: this GPU engine, or the threads engine
  // for the last job it sent to the CPU (as auto's kind() is the engine it
  // chose), so that -v and --json say what ran the AES.
  EngineKind kind() const override { return ran_on_cpu_ ? EngineKind::threads : kind_; }
  unsigned workers_for(const Job& job, std::uint64_t input_len) const override {
    return on_gpu(job) ? 1 : cpu_.workers_for(job, input_len);
  }

  std::uint64_t run(const Job& job, Source& in, Sink& out) override {
    if (!on_gpu(job)) {
      to_cpu(job);
      return cpu_.run(job, in, out);
    }
    job.chunk_count(in.size());  // refuses impossible lengths as the CPU path does
    return on_device().run(*job.raw_spec(), in, out, [this](std::uint64_t bytes) { report(bytes); });
  }

  std::uint64_t run_stream(const Job& job, StreamReader& in, StreamWriter& out) override {
    if (!on_gpu(job)) {
      to_cpu(job);
      return cpu_.run_stream(job, in, out);
    }
    return on_device().run_stream(*job.raw_spec(), in, out, [this](std::uint64_t bytes) { report(bytes); });
  }

  std::optional<PipelineTimes> pipeline_times() const override {
    if (ran_on_cpu_ || !backend_) return std::nullopt;
    const auto& stats = backend_->stats();
    PipelineTimes times;
    times.batches = stats.batches;
    times.batch_bytes = backend_->batch_bytes();
    times.fill_seconds = stats.fill_seconds;
    times.device_wait_seconds = stats.wait_seconds;
    times.drain_seconds = stats.drain_seconds;
    return times;
  }

  Backend& backend() {
    if (!backend_) backend_ = std::make_unique<Backend>(options_);
    return *backend_;
  }

 private:
  static bool on_gpu(const Job& job) {
    const CipherSpec* spec = job.raw_spec();
    return spec && Backend::supports(*spec);
  }
  // The device, for a job it runs: its stats count this job alone.
  Backend& on_device() {
    ran_on_cpu_ = false;
    Backend& device = backend();
    device.reset_stats();
    return device;
  }
  // Hands `job` to the threads engine: says so, and passes its progress on,
  // which is what --progress shows and the report's bytes_in counts.
  void to_cpu(const Job& job) {
    ran_on_cpu_ = true;
    cpu_.on_progress([this](std::uint64_t bytes) { report(bytes); });
    notify(NoticeLevel::note, job.raw_spec() ? "this mode and direction is sequential (or CFB8/CFB1): it runs on the CPU"
                                             : "the sealed format (AES-GCM) runs on the CPU");
  }

  EngineKind kind_;
  Options options_;
  ThreadsEngine cpu_;
  bool ran_on_cpu_ = false;
  std::unique_ptr<Backend> backend_;
};

}  // namespace paes
