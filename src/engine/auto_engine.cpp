#include "engine/auto_engine.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include "gpu/gpu_modes.hpp"
#include "paes/backend.hpp"
#include "paes/error.hpp"
#include "paes/plan.hpp"

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

namespace {

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

// What the measured rates depend on: the CPU and its AES library, the
// threads, the device, the kernel and the key size. Tabs and newlines would
// break the cache's lines.
std::string rate_key(EngineKind gpu, const std::string& device, const CipherSpec& spec, unsigned threads) {
  std::string key = cpu_model() + "|" + selected_cipher_backend() + "|" + std::to_string(threads) + " threads|" +
                    std::string(engine_name(gpu)) + "|" + device + "|" + std::string(mode_name(spec.mode)) + " " +
                    std::string(direction_name(spec.direction)) + "|" + std::to_string(spec.key_bits());
  for (char& c : key) {
    if (c == '\t' || c == '\n') c = ' ';
  }
  return key;
}

// Seconds of `engine` on kAutoProbeBytes of `spec` in memory: the better of
// two runs, the first of which may also warm the engine up.
double probe_seconds(Engine& engine, const CipherSpec& spec, std::span<const std::uint8_t> in,
                     std::span<std::uint8_t> out) {
  const ChunkPlan plan(spec, ChunkPlan::kAutoChunkLen);
  double best = 0;
  for (int run = 0; run < 2; ++run) {
    MemorySource source(in);
    MemorySink sink(out);
    const auto start = std::chrono::steady_clock::now();
    engine.run(plan, source, sink);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (run == 0 || seconds < best) best = seconds;
  }
  return best;
}

MeasuredRates measure_rates(Engine& gpu, const CipherSpec& job_spec, unsigned threads) {
  CipherSpec spec;  // the job's, unpadded: any bytes are valid input
  spec.mode = job_spec.mode;
  spec.direction = job_spec.direction;
  spec.key = job_spec.key.clone();
  spec.iv = job_spec.iv;
  spec.padding = false;
  std::vector<std::uint8_t> in(kAutoProbeBytes);
  std::vector<std::uint8_t> out(kAutoProbeBytes + kBlockLen);
  const auto cpu = make_engine(EngineKind::threads, threads);
  const double bytes = static_cast<double>(in.size());
  return {bytes / probe_seconds(gpu, spec, in, out), bytes / probe_seconds(*cpu, spec, in, out)};
}

std::string describe_rates(EngineKind gpu, const MeasuredRates& rates, bool measured_now) {
  char text[160];
  std::snprintf(text, sizeof text, "%s %.2f GB/s with transfers, threads %.2f GB/s (%s)",
                std::string(engine_name(gpu)).c_str(), rates.gpu_bytes_per_s / 1e9, rates.cpu_bytes_per_s / 1e9,
                measured_now ? "measured now, kept for next time" : "measured before");
  return text;
}

}  // namespace

// Starts the GPU engine chosen_ names when the rates say it is faster
// (measuring them first, with it, when they are not known yet); otherwise,
// or when the device fails, chosen_ becomes the threads engine.
void AutoEngine::start_gpu_if_faster(const CipherSpec& spec) {
  const EngineKind gpu = chosen_;
  // The device the engine will start: --device's, else the first GPU.
  const auto devices = list_gpu_devices(gpu);
  auto it = devices.begin();
  if (device_) {
    it = *device_ < devices.size() ? devices.begin() + *device_ : devices.end();
  } else {
    it = std::find_if(devices.begin(), devices.end(), [](const GpuDevice& d) { return d.type == "gpu"; });
  }
  const std::string device = it != devices.end() ? it->name : "device " + std::to_string(device_.value_or(0));
  const unsigned threads = threads_ != 0 ? threads_ : online_cpus();
  const std::string key = rate_key(gpu, device, spec, threads);
  RateCache cache(RateCache::default_path());
  std::optional<MeasuredRates> rates = cache.find(key);
  const bool measured_now = !rates;
  chosen_ = EngineKind::threads;
  if (rates && !gpu_measured_faster(*rates)) {
    choice_ = "auto chose threads: " + describe_rates(gpu, *rates, false);
    return;
  }
  // Auto promises the best engine that gives correct bytes, so a GPU that
  // can't start, fails its AES self-test or the measurement leaves the job to
  // the CPU. An explicit --engine opencl|cuda fails instead: the user asked
  // for that device. A device that fails a per-batch check during the job
  // fails the run either way (some output exists by then).
  try {
    engine_ = make_started_gpu_engine(gpu, threads_, device_);
    if (!rates) {
      rates = measure_rates(*engine_, spec, threads);
      cache.store(key, *rates);
    }
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::usage) throw;
    std::cerr << "paes: warning: " << e.what()
              << "\npaes: warning: --engine auto runs this job on the CPU (threads engine) instead\n";
    engine_.reset();
    choice_ = "auto chose threads: the " + std::string(engine_name(gpu)) + " device failed";
    return;
  }
  if (gpu_measured_faster(*rates)) {
    chosen_ = gpu;
  } else {
    engine_.reset();
  }
  choice_ = "auto chose " + std::string(engine_name(chosen_)) + ": " + describe_rates(gpu, *rates, measured_now);
}

Engine& AutoEngine::pick(const Job& job, std::uint64_t input_len) {
  // Devices are only probed when the job could use one: small jobs never
  // pay for a driver's start-up.
  const bool worthy = gpu_worthy(job, input_len);
  chosen_ = worthy ? auto_engine_choice(job, input_len, has_cuda_device(), has_opencl_gpu()) : EngineKind::threads;
  choice_.clear();
  engine_.reset();
  if (chosen_ != EngineKind::threads) start_gpu_if_faster(*job.raw_spec());
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
