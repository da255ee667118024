#include "engine/auto_engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "engine/gpu_stack.hpp"
#include "gpu/gpu_modes.hpp"
#include "paes/backend.hpp"
#include "paes/error.hpp"
#include "paes/notice.hpp"
#include "paes/plan.hpp"
#include "util/elapsed.hpp"

namespace paes {
namespace {

bool gpu_worthy(const Job& job, std::uint64_t input_len) {
  const CipherSpec* spec = job.raw_spec();
  return spec && input_len >= kAutoGpuMinBytes && gpu::runs_on_gpu(*spec);
}

// Why a job is no GPU's, in -v's words (gpu_worthy is false).
std::string why_on_the_cpu(const Job& job, std::optional<std::uint64_t> input_len) {
  const CipherSpec* spec = job.raw_spec();
  if (!spec) return "the sealed format (AES-GCM) runs on the CPU";
  if (!gpu::runs_on_gpu(*spec)) return "this mode and direction runs on the CPU (sequential, or CFB8/CFB1)";
  if (!input_len) return "a stream's size is unknown, and a GPU pays off only for large jobs";
  return "a job under " + std::to_string(kAutoGpuMinBytes >> 20) + " MiB never pays for a GPU's start-up";
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

bool gpu_predicted_faster(const MeasuredRates& rates, std::uint64_t len, bool started) {
  if (!rates.found_gpu()) return false;
  const auto bytes = static_cast<double>(len);
  const double gpu_seconds = (started ? 0.0 : rates.gpu_start_seconds) + bytes / rates.gpu_bytes_per_s;
  return gpu_seconds < bytes / rates.cpu_bytes_per_s;
}

std::optional<std::uint64_t> gpu_from_bytes(const MeasuredRates& rates) {
  if (!rates.found_gpu() || !(rates.gpu_bytes_per_s > rates.cpu_bytes_per_s)) return std::nullopt;
  // Break-even: start + len / gpu = len / cpu; a tie stays on the CPU.
  const double saved_per_byte = 1 / rates.cpu_bytes_per_s - 1 / rates.gpu_bytes_per_s;
  const double even = std::floor(rates.gpu_start_seconds / saved_per_byte);
  if (!(even < 0x1p63)) return std::nullopt;  // a saving too small for any file
  auto least = std::max(kAutoGpuMinBytes, static_cast<std::uint64_t>(even) + 1);
  while (!gpu_predicted_faster(rates, least, false)) least += 1 + least / (std::uint64_t{1} << 40);  // rounding
  return least;
}

namespace {

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

// The name of the device the `gpu` engine starts: --device's, else the first GPU.
std::string device_name(EngineKind gpu, std::optional<unsigned> device) {
  const auto devices = list_gpu_devices(gpu);
  auto it = devices.begin();
  if (device) {
    it = *device < devices.size() ? devices.begin() + *device : devices.end();
  } else {
    it = std::find_if(devices.begin(), devices.end(), [](const GpuDevice& d) { return d.type == "gpu"; });
  }
  return it != devices.end() ? it->name : "device " + std::to_string(device.value_or(0));
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
    const double seconds = seconds_since(start);
    if (run == 0 || seconds < best) best = seconds;
  }
  return best;
}

// Fills in the rates of `gpu`, already started, and of the threads engine.
void measure_rates(Engine& gpu, const CipherSpec& job_spec, unsigned threads, MeasuredRates& rates) {
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
  rates.gpu_bytes_per_s = bytes / probe_seconds(gpu, spec, in, out);
  rates.cpu_bytes_per_s = bytes / probe_seconds(*cpu, spec, in, out);
}

// Why auto chose what it did, e.g. "cuda 30.1 GB/s with transfers + 0.41 s to
// start, threads 25.3 GB/s: 0.45 s against 0.04 s for 1024 MiB (measured
// before)"; `when` is what the parentheses say.
std::string describe_rates(const MeasuredRates& rates, std::uint64_t len, bool started, const std::string& when) {
  const auto bytes = static_cast<double>(len);
  const double gpu_seconds = (started ? 0.0 : rates.gpu_start_seconds) + bytes / rates.gpu_bytes_per_s;
  char text[256];
  std::snprintf(text, sizeof text,
                "%s %.2f GB/s with transfers + %.2f s to start%s, threads %.2f GB/s: %.2f s against %.2f s for "
                "%.0f MiB (%s)",
                std::string(engine_name(rates.gpu)).c_str(), rates.gpu_bytes_per_s / 1e9, rates.gpu_start_seconds,
                started ? " (started already)" : "", rates.cpu_bytes_per_s / 1e9, gpu_seconds,
                bytes / rates.cpu_bytes_per_s, bytes / (1 << 20),
                when.c_str());
  return text;
}

}  // namespace

// What the measured rates depend on: the CPU and its AES library, the
// threads, the GPU stack (and --device), the kernel and the key size; all of
// it known without starting a driver. kept_auto_verdicts() reads keys back.
std::string auto_rate_key(const CipherSpec& spec, unsigned threads, std::optional<unsigned> device) {
  return cpu_model() + "|" + selected_cipher_backend() + "|" + std::to_string(threads) + " threads|gpu stack " +
         gpu_stack_fingerprint() + (device ? " device " + std::to_string(*device) : std::string()) + "|" +
         std::string(mode_name(spec.mode)) + " " + std::string(direction_name(spec.direction)) + "|" +
         std::to_string(spec.key_bits());
}

std::string auto_rate_cache_path() { return RateCache::default_path().string(); }

std::vector<AutoVerdict> kept_auto_verdicts() {
  const std::string machine = cpu_model() + "|";
  const std::string stack = "gpu stack " + gpu_stack_fingerprint();
  const RateCache cache(RateCache::default_path());
  std::vector<AutoVerdict> verdicts;
  for (const auto& [key, rates] : cache.entries()) {
    if (key.rfind(machine, 0) != 0) continue;  // another machine's, sharing a home directory
    std::vector<std::string> parts;  // backend, threads, stack [device], job, key bits
    std::istringstream rest(key.substr(machine.size()));
    for (std::string part; std::getline(rest, part, '|');) parts.push_back(part);
    if (parts.size() != 5 || parts[2].rfind(stack, 0) != 0) continue;  // a GPU stack since changed
    const std::string device = parts[2].substr(stack.size());           // "" or " device N"
    constexpr std::string_view kDevice = " device ";
    if (!device.empty() && device.rfind(kDevice, 0) != 0) continue;
    AutoVerdict v;
    v.job = parts[3] + " AES-" + parts[4] + ", " + parts[1] + ", --backend " + parts[0] +
            (device.empty() ? "" : ", --device " + device.substr(kDevice.size()));
    if (rates.found_gpu()) v.gpu_engine = engine_name(rates.gpu);
    v.device = rates.device;
    v.gpu_bytes_per_s = rates.gpu_bytes_per_s;
    v.cpu_bytes_per_s = rates.cpu_bytes_per_s;
    v.gpu_start_seconds = rates.gpu_start_seconds;
    v.gpu_from_bytes = gpu_from_bytes(rates);
    verdicts.push_back(std::move(v));
  }
  return verdicts;
}

// Runs `work` (starting or measuring the `gpu` engine); false, with a
// warning and engine_ empty, where the device fails.
bool AutoEngine::on_device(EngineKind gpu, const std::function<void()>& work) {
  // Auto promises the best engine that gives correct bytes, so a GPU that
  // can't start, fails its AES self-test or the measurement leaves the job to
  // the CPU. An explicit --engine opencl|cuda fails instead: the user asked
  // for that device. A device that fails a per-batch check during the job
  // fails the run either way (some output exists by then).
  try {
    work();
    return true;
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::usage) throw;
    notify(NoticeLevel::warning, e.what());
    notify(NoticeLevel::warning, "--engine auto runs this job on the CPU (threads engine) instead");
    engine_.reset();
    choice_ = "auto chose threads: the " + std::string(engine_name(gpu)) + " device failed";
    return false;
  }
}

bool AutoEngine::start_gpu(EngineKind gpu) {
  return on_device(gpu, [&] { engine_ = make_started_gpu_engine(gpu, threads_, device_); });
}

// A job of a kind auto has seen on this GPU stack: no driver starts unless
// the GPU is predicted faster.
void AutoEngine::choose_by_kept_rates(const MeasuredRates& kept, std::uint64_t len) {
  if (!kept.found_gpu()) {
    choice_ = "auto chose threads: no GPU for this job (looked before, and the GPU stack is unchanged)";
    return;
  }
  if (!gpu_predicted_faster(kept, len, false)) {
    choice_ = "auto chose threads: " + describe_rates(kept, len, false, "measured before");
    return;
  }
  if (!start_gpu(kept.gpu)) return;
  chosen_ = kept.gpu;
  choice_ = "auto chose " + std::string(engine_name(chosen_)) + ": " + describe_rates(kept, len, false, "measured before");
}

// The first job of its kind on this GPU stack: looks for a GPU (CUDA first;
// OpenCL's platforms are only loaded where CUDA has none), starts and measures
// it, and keeps what it found, no GPU included.
void AutoEngine::look_and_measure(const Job& job, std::uint64_t len, unsigned threads, RateCache& cache) {
  const CipherSpec& spec = *job.raw_spec();
  const auto start = std::chrono::steady_clock::now();
  const bool cuda = has_cuda_device();
  MeasuredRates found;
  found.gpu = auto_engine_choice(job, len, cuda, !cuda && has_opencl_gpu());
  if (!found.found_gpu()) {
    choice_ = "auto chose threads: no GPU for this job (looked now, " + keep(cache, spec, threads, found) + ")";
    return;
  }
  found.device = device_name(found.gpu, device_);
  if (!start_gpu(found.gpu)) return;
  found.gpu_start_seconds = seconds_since(start);
  if (!on_device(found.gpu, [&] { measure_rates(*engine_, spec, threads, found); })) return;
  // Keyed by the stack as it is now: starting a driver may add device nodes
  // (nvidia-uvm), which later jobs will see.
  const std::string kept = keep(cache, spec, threads, found);
  if (gpu_predicted_faster(found, len, true)) {
    chosen_ = found.gpu;
  } else {
    engine_.reset();
  }
  choice_ = "auto chose " + std::string(engine_name(chosen_)) + ": " +
            describe_rates(found, len, true, "measured now, " + kept);
}

// Stores what look_and_measure found; says whether it was kept. A cache that
// can't be written costs every later job the looking and measuring again,
// so that is worth a warning.
std::string AutoEngine::keep(RateCache& cache, const CipherSpec& spec, unsigned threads, const MeasuredRates& found) {
  const std::optional<std::string> why_not = cache.store(auto_rate_key(spec, threads, device_), found);
  if (!why_not) return "kept for next time";
  notify(NoticeLevel::warning, "--engine auto could not keep what it measured (" + *why_not +
                                   "), so every such job measures again; PAES_CACHE_DIR names a directory for it");
  return "not kept";
}

Engine& AutoEngine::pick(const Job& job, std::optional<std::uint64_t> stated_len) {
  chosen_ = EngineKind::threads;
  choice_.clear();
  engine_.reset();
  const std::uint64_t input_len = stated_len.value_or(0);
  // Devices are only looked for when the job could use one: small jobs
  // never pay for a driver's start-up.
  if (gpu_worthy(job, input_len)) {
    RateCache cache(RateCache::default_path());
    const unsigned threads = threads_ != 0 ? threads_ : online_cpus();
    if (const std::optional<MeasuredRates> kept = cache.find(auto_rate_key(*job.raw_spec(), threads, device_))) {
      choose_by_kept_rates(*kept, input_len);
    } else {
      look_and_measure(job, input_len, threads, cache);
    }
  } else {
    choice_ = "auto chose threads: " + why_on_the_cpu(job, stated_len);
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
  return pick(job, std::nullopt).run_stream(job, in, out);
}

}  // namespace paes
