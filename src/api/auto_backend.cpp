#include "api/auto_backend.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "api/gpu_stack.hpp"
#include "paes/backend.hpp"
#include "paes/engine.hpp"
#include "paes/error.hpp"
#include "paes/notice.hpp"
#include "paes/plan.hpp"
#include "util/elapsed.hpp"

namespace paes {
namespace {

// Why a job stays on the CPU before any GPU is looked for; empty where a GPU
// is worth looking for.
std::string why_on_the_cpu(const CipherSpec& spec, std::optional<std::uint64_t> input_len) {
  bool runs_on_a_gpu = false;
  for (const CipherBackend* backend : cipher_backends()) {
    runs_on_a_gpu = runs_on_a_gpu || (backend->runs_on_device() && backend->runs(spec.mode, spec.direction));
  }
  if (!runs_on_a_gpu) {
    const bool built = std::any_of(cipher_backends().begin(), cipher_backends().end(),
                                   [](const CipherBackend* b) { return b->runs_on_device(); });
    return built ? "this mode and direction runs on the CPU (sequential, or CFB8/CFB1)" : "this paes has no GPU backend";
  }
  if (!input_len) return "a stream's size is unknown, and a GPU pays off only for large jobs";
  if (*input_len < kAutoGpuMinBytes) {
    return "a job under " + std::to_string(kAutoGpuMinBytes >> 20) + " MiB never pays for a GPU's start-up";
  }
  return {};
}

// The GPU backend auto looks at: the first row with a real GPU (a device of
// type "gpu"; never a CPU device) among its devices, or `device` where the
// caller named one, on that device. Null where there is none; `device_name`
// gets its name.
const CipherBackend* find_gpu(std::optional<unsigned> device, std::string& device_name) {
  for (const CipherBackend* row : cipher_backends()) {
    if (!row->runs_on_device() || !row->available()) continue;
    for (const GpuDeviceInfo& d : row->devices()) {
      if (d.type == "gpu" && (!device || d.index == *device)) {
        device_name = d.name;
        return &row->on_device(d.index);
      }
    }
  }
  return nullptr;
}

}  // namespace

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

// Seconds of the threads engine on `backend` over kAutoProbeBytes of `spec`
// in memory: the better of two runs, the first of which may also warm the
// backend up.
double probe_seconds(Engine& engine, const CipherBackend& backend, const CipherSpec& spec,
                     std::span<const std::uint8_t> in, std::span<std::uint8_t> out) {
  const ChunkPlan plan(spec, ChunkPlan::kAutoChunkLen, backend);
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

// Fills in the rates of the threads engine on `gpu`, already started, and on
// the CPU's backend.
void measure_rates(const CipherBackend& gpu, const CipherSpec& job_spec, unsigned threads, MeasuredRates& rates) {
  CipherSpec spec;  // the job's, unpadded: any bytes are valid input
  spec.mode = job_spec.mode;
  spec.direction = job_spec.direction;
  spec.key = job_spec.key.clone();
  spec.iv = job_spec.iv;
  spec.padding = false;
  std::vector<std::uint8_t> in(kAutoProbeBytes);
  std::vector<std::uint8_t> out(kAutoProbeBytes + kBlockLen);
  // The engine's pinned chunk memory does not serve memory jobs: pinning the
  // probe's buffers is what a caller of transform_memory does (pin_memory).
  const PinnedMemory pinned_in = gpu.pin(in.data(), in.size());
  const PinnedMemory pinned_out = gpu.pin(out.data(), out.size());
  const auto engine = make_engine(EngineKind::threads, threads);
  const double bytes = static_cast<double>(in.size());
  rates.gpu_bytes_per_s = bytes / probe_seconds(*engine, gpu, spec, in, out);
  rates.cpu_bytes_per_s = bytes / probe_seconds(*engine, cpu_raw_backend(spec.mode, spec.direction), spec, in, out);
}

// Why auto chose what it did, e.g. "NAME 30.1 GB/s with transfers + 0.41 s to
// start, threads 25.3 GB/s: 0.45 s against 0.04 s for 1024 MiB (measured
// before)"; `when` is what the parentheses say.
std::string describe_rates(const MeasuredRates& rates, std::uint64_t len, bool started, const std::string& when) {
  const auto bytes = static_cast<double>(len);
  const double gpu_seconds = (started ? 0.0 : rates.gpu_start_seconds) + bytes / rates.gpu_bytes_per_s;
  char text[256];
  std::snprintf(text, sizeof text,
                "%s %.2f GB/s with transfers + %.2f s to start%s, the CPU %.2f GB/s: %.2f s against %.2f s for "
                "%.0f MiB (%s)",
                rates.gpu.c_str(), rates.gpu_bytes_per_s / 1e9, rates.gpu_start_seconds,
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
  // (The second field named the process's backend when there was one; auto's
  // GPU policy runs under auto alone, so it always says so.)
  return cpu_model() + "|" + std::string(kAutoBackend) + "|" + std::to_string(threads) + " threads|gpu stack " +
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
    v.job = parts[3] + " AES-" + parts[4] + ", " + parts[1] + ", backend " + parts[0] +
            (device.empty() ? "" : ", device " + device.substr(kDevice.size()));
    v.gpu_backend = rates.gpu;
    v.device = rates.device;
    v.gpu_bytes_per_s = rates.gpu_bytes_per_s;
    v.cpu_bytes_per_s = rates.cpu_bytes_per_s;
    v.gpu_start_seconds = rates.gpu_start_seconds;
    v.gpu_from_bytes = gpu_from_bytes(rates);
    verdicts.push_back(std::move(v));
  }
  return verdicts;
}

namespace {

// Runs `work` (starting or measuring `gpu`); false, with a warning, where the
// device fails. Auto promises the best backend that gives correct bytes, so
// a GPU that can't start, fails its AES self-test or the measurement leaves
// the job to the CPU. An explicit --backend fails instead: the user asked
// for that device. A device that fails a per-batch check during the job
// fails the run either way (some output exists by then).
bool on_device(const CipherBackend& gpu, const std::function<void()>& work, AutoChoice& choice) {
  try {
    work();
    return true;
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::usage) throw;
    notify(NoticeLevel::warning, e.what());
    notify(NoticeLevel::warning, "auto runs this job on the CPU instead");
    choice.backend = nullptr;
    choice.why = "auto chose the CPU: the " + std::string(gpu.name()) + " device failed";
    return false;
  }
}

// Stores what auto found; says whether it was kept. A cache that can't be
// written costs every later job the looking and measuring again, so that is
// worth a warning.
std::string keep(RateCache& cache, const std::string& key, const MeasuredRates& found) {
  const std::optional<std::string> why_not = cache.store(key, found);
  if (!why_not) return "kept for next time";
  notify(NoticeLevel::warning, "auto could not keep what it measured (" + *why_not +
                                   "), so every such job measures again; PAES_CACHE_DIR names a directory for it");
  return "not kept";
}

// A job of a kind auto has seen on this GPU stack: no driver starts unless
// the GPU is predicted faster.
AutoChoice choose_by_kept_rates(const MeasuredRates& kept, std::uint64_t len, std::optional<unsigned> device) {
  AutoChoice choice;
  if (!kept.found_gpu()) {
    choice.why = "auto chose the CPU: no GPU for this job (looked before, and the GPU stack is unchanged)";
    return choice;
  }
  if (!gpu_predicted_faster(kept, len, false)) {
    choice.why = "auto chose the CPU: " + describe_rates(kept, len, false, "measured before");
    return choice;
  }
  std::string name;
  const CipherBackend* gpu = find_gpu(device, name);
  if (!gpu || gpu->name() != kept.gpu) {
    choice.why = "auto chose the CPU: the " + kept.gpu + " GPU it measured is gone";
    return choice;
  }
  if (!on_device(*gpu, [&] { gpu->start(); }, choice)) return choice;
  choice.backend = gpu;
  choice.why = "auto chose " + kept.gpu + ": " + describe_rates(kept, len, false, "measured before");
  return choice;
}

// The first job of its kind on this GPU stack: looks for a GPU, starts and
// measures it, and keeps what it found, no GPU included.
AutoChoice look_and_measure(const CipherSpec& spec, std::uint64_t len, unsigned threads,
                            std::optional<unsigned> device, RateCache& cache) {
  AutoChoice choice;
  const std::string key = auto_rate_key(spec, threads, device);
  const auto start = std::chrono::steady_clock::now();
  MeasuredRates found;
  const CipherBackend* gpu = find_gpu(device, found.device);
  if (!gpu) {
    choice.why = "auto chose the CPU: no GPU for this job (looked now, " + keep(cache, key, found) + ")";
    return choice;
  }
  found.gpu = std::string(gpu->name());
  if (!on_device(*gpu, [&] { gpu->start(); }, choice)) return choice;
  found.gpu_start_seconds = seconds_since(start);
  if (!on_device(*gpu, [&] { measure_rates(*gpu, spec, threads, found); }, choice)) return choice;
  // Keyed by the stack as it is now: starting a driver may add device nodes
  // (nvidia-uvm), which later jobs will see.
  const std::string kept = keep(cache, key, found);
  const bool faster = gpu_predicted_faster(found, len, true);
  if (faster) choice.backend = gpu;
  choice.why = "auto chose " + (faster ? found.gpu : std::string("the CPU")) + ": " +
               describe_rates(found, len, true, "measured now, " + kept);
  return choice;
}

}  // namespace

AutoChoice choose_auto_backend(const CipherSpec& spec, std::optional<std::uint64_t> input_len, unsigned threads,
                               std::optional<unsigned> device) {
  // Devices are only looked for when the job could use one: small jobs
  // never pay for a driver's start-up.
  if (std::string why = why_on_the_cpu(spec, input_len); !why.empty()) return {nullptr, "auto chose the CPU: " + why};
  RateCache cache(RateCache::default_path());
  if (const std::optional<MeasuredRates> kept = cache.find(auto_rate_key(spec, threads, device))) {
    return choose_by_kept_rates(*kept, *input_len, device);
  }
  return look_and_measure(spec, *input_len, threads, device, cache);
}

}  // namespace paes
