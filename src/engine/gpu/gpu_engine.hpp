// The opencl and cuda engines: a GPU backend (OpenClEngine, CudaEngine, which
// share one API shape) behind the Engine interface.
//
// A GPU runs the raw modes whose blocks are independent (ECB, CTR, and CBC
// and CFB128 decryption) on the whole input, streamed through the backend in
// batches: the backend keeps two batches in flight so transfers overlap its
// kernels, and carries the chaining state from one batch to the next. What a
// GPU doesn't run (sequential directions, CFB8/CFB1, the sealed format's
// AES-GCM, and streams from pipes) goes to the threads engine, with a
// one-line note saying so: the bytes are the same either way.
#pragma once

#include <iostream>
#include <memory>
#include <vector>

#include "engine/engines.hpp"

namespace paes {

template <class Backend, class Options>
class GpuEngine final : public Engine {
 public:
  GpuEngine(EngineKind kind, Options options, unsigned cpu_threads)
      : kind_(kind), options_(options), cpu_(cpu_threads) {}

  EngineKind kind() const override { return kind_; }
  unsigned workers_for(const Job& job, std::uint64_t input_len) const override {
    return on_gpu(job) ? 1 : cpu_.workers_for(job, input_len);
  }

  std::uint64_t run(const Job& job, Source& in, Sink& out) override {
    if (!on_gpu(job)) return run_on_cpu(job, in, out);
    const CipherSpec& spec = *job.raw_spec();
    job.chunk_count(in.size());  // refuses impossible lengths as the CPU path does
    Backend& gpu = backend();
    gpu.begin(spec, spec.iv);
    // Several backend batches per call, so the backend keeps its batches in
    // flight (transfers overlapping kernels) within each piece of the file.
    const std::size_t batch = options_.batch_bytes * 4;
    if (in.in_memory() && out.in_memory()) {
      const std::uint64_t len = in.size();
      const std::size_t produced = gpu.update(out.view(0, static_cast<std::size_t>(output_capacity(job, len))),
                                              in.view(0, static_cast<std::size_t>(len)), static_cast<std::size_t>(len), true);
      report(len);
      return produced;
    }
    std::vector<std::uint8_t> buffer(batch + kBlockLen);
    std::uint64_t written = 0;
    std::uint64_t offset = 0;
    do {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(batch, in.size() - offset));
      const bool last = offset + n == in.size();
      in.read_at(offset, {buffer.data(), n});
      const std::size_t produced = gpu.update(buffer.data(), buffer.data(), n, last);
      out.write_at(written, {buffer.data(), produced});
      written += produced;
      offset += n;
      report(n);
    } while (offset < in.size());
    return written;
  }

  std::uint64_t run_stream(const Job& job, StreamReader& in, StreamWriter& out) override {
    note("streams from pipes run on the CPU");
    return cpu_.run_stream(job, in, out);
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
  std::uint64_t run_on_cpu(const Job& job, Source& in, Sink& out) {
    note(job.raw_spec()
             ? "this mode and direction is sequential (or CFB8/CFB1): it runs on the CPU"
             : "the sealed format (AES-GCM) runs on the CPU");
    return cpu_.run(job, in, out);
  }
  void note(const char* what) const { std::cerr << "paes: note: " << what << "\n"; }

  EngineKind kind_;
  Options options_;
  ThreadsEngine cpu_;
  std::unique_ptr<Backend> backend_;
};

}  // namespace paes
