// The engines this build has, in one table (kEngines): every engine name,
// make_engine, the stream rule, and the GPU device lists and backends the
// public API offers come from here, the one file that asks which engines
// were built (PAES_HAVE_*, and PAES_MPI_BUILT: the mpi engine is in
// libpaes_mpi, which registers it when MPI starts).
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <string>

#include "engine/auto_engine.hpp"
#include "engine/engines.hpp"
#include "gpu/gpu_modes.hpp"
#include "paes/error.hpp"
#if defined(PAES_HAVE_OPENCL) || defined(PAES_HAVE_CUDA)
#include "engine/gpu/gpu_engine.hpp"
#endif
#ifdef PAES_HAVE_OPENCL
#include "engine/gpu/opencl_engine.hpp"
#endif
#ifdef PAES_HAVE_CUDA
#include "engine/gpu/cuda_engine.hpp"
#endif

namespace paes {

namespace {

unsigned cpu_threads_for(unsigned threads) { return threads == 0 ? online_cpus() : threads; }

#if defined(PAES_HAVE_OPENCL) || defined(PAES_HAVE_CUDA)
template <class Backend, class Options>
std::unique_ptr<Engine> gpu_engine(EngineKind kind, unsigned threads, std::optional<unsigned> device, bool start) {
  Options options;
  options.device_index = device;
  // --threads N: on a GPU the CPU's threads read and write; half of them
  // each (the driver's default without it).
  options.copy_threads = threads == 0 ? 0 : std::max(1u, threads / 2);
  auto engine = std::make_unique<GpuEngine<Backend, Options>>(kind, options, cpu_threads_for(threads));
  if (start) engine->backend();
  return engine;
}
#endif

// The opencl or cuda engine with `threads` (--threads; 0: the default) for
// what runs on the CPU; with `start`, its device is started (and
// self-tested) now rather than at its first job.
// (The parameters go unused in a build with neither.)
std::unique_ptr<Engine> gpu_engine(EngineKind kind, [[maybe_unused]] unsigned threads,
                                   [[maybe_unused]] std::optional<unsigned> device, [[maybe_unused]] bool start) {
  if (kind == EngineKind::opencl) {
#ifdef PAES_HAVE_OPENCL
    return gpu_engine<OpenClEngine, OpenClOptions>(kind, threads, device, start);
#else
    throw usage_error("this paes was built without OpenCL: no opencl engine");
#endif
  }
#ifdef PAES_HAVE_CUDA
  return gpu_engine<CudaEngine, CudaOptions>(kind, threads, device, start);
#else
  throw usage_error("this paes was built without CUDA: no cuda engine");
#endif
}

#if defined(PAES_HAVE_OPENCL) || defined(PAES_HAVE_CUDA)
// A backend class behind the GpuBackend interface; Options is its options
// struct (device_index, batch_bytes, profile).
template <class Backend, class Options>
class DirectGpuBackend final : public GpuBackend {
 public:
  explicit DirectGpuBackend(const Options& options) : backend_(options) {}
  std::size_t transform(const CipherSpec& spec, std::uint8_t* out, const std::uint8_t* in,
                        std::size_t len) override {
    return backend_.transform(spec, out, in, len);
  }
  double kernel_seconds() const override { return backend_.stats().kernel_seconds; }
  void reset_stats() override { backend_.reset_stats(); }
  LinkRates measure_link(std::size_t bytes, unsigned repeats) override {
    return backend_.measure_link(bytes, repeats);
  }
  double kernel_only_seconds(const CipherSpec& spec, std::size_t bytes, unsigned repeats) override {
    return backend_.kernel_only_seconds(spec, bytes, repeats);
  }
  PinnedMemory pin_memory(const void* data, std::size_t len) override { return backend_.pin(data, len); }

 private:
  Backend backend_;
};

#ifdef PAES_HAVE_OPENCL
void apply_geometry(OpenClOptions& options, const GpuGeometry& geometry) {
  if (geometry.group_size != 0) options.local_size = geometry.group_size;
  if (geometry.blocks_per_item != 0) options.blocks_per_item = geometry.blocks_per_item;
}
#endif
#ifdef PAES_HAVE_CUDA
void apply_geometry(CudaOptions& options, const GpuGeometry& geometry) {
  if (geometry.group_size != 0) options.threads_per_block = geometry.group_size;
  if (geometry.blocks_per_item != 0) options.blocks_per_thread = geometry.blocks_per_item;
}
#endif

template <class Backend, class Options>
std::unique_ptr<GpuBackend> open_direct(std::optional<unsigned> device, std::size_t batch_bytes,
                                        const GpuGeometry& geometry) {
  Options options;
  options.device_index = device;
  options.batch_bytes = batch_bytes;
  options.profile = true;
  apply_geometry(options, geometry);
  return std::make_unique<DirectGpuBackend<Backend, Options>>(options);
}
#endif

// The engines, one row each: its kind, its name on the command line, how to
// make it (null where this build lacks it), and why it refuses streams (empty
// where it runs them). Names, parsing, the list that `paes info` prints,
// make_engine and the stream rule all come from this table.
using EngineFactory = std::unique_ptr<Engine> (*)(unsigned threads, std::optional<unsigned> device);

struct EngineRow {
  EngineKind kind;
  std::string_view name;
  EngineFactory make;
  std::string_view refuses_streams = {};
};

// Set by MpiSession (libpaes_mpi); see register_mpi_engine.
std::atomic<MpiEngineMaker> g_mpi_engine{nullptr};

constexpr std::string_view kMpiRefusesStreams =
    "streams (stdin, stdout, pipes, /proc files) are refused under MPI: every rank opens the input and "
    "output files itself (give INPUT and -o OUTPUT as files)";

constexpr EngineRow kEngines[] = {
    {EngineKind::serial, "serial", [](unsigned, std::optional<unsigned>) -> std::unique_ptr<Engine> {
       return std::make_unique<SerialEngine>();
     }},
    {EngineKind::threads, "threads", [](unsigned threads, std::optional<unsigned>) -> std::unique_ptr<Engine> {
       return std::make_unique<ThreadsEngine>(cpu_threads_for(threads));
     }},
    {EngineKind::automatic, "auto", [](unsigned threads, std::optional<unsigned> device) -> std::unique_ptr<Engine> {
       return std::make_unique<AutoEngine>(threads, device);
     }},
#ifdef PAES_MPI_BUILT
    {EngineKind::mpi, "mpi", [](unsigned threads, std::optional<unsigned>) -> std::unique_ptr<Engine> {
       const MpiEngineMaker make = g_mpi_engine.load();
       if (!make) {
         throw usage_error("--engine mpi runs under mpiexec, in paes-mpi (paes hands it the command line): "
                           "this process started no MPI");
       }
       return make(threads);
     }, kMpiRefusesStreams},
#else
    {EngineKind::mpi, "mpi", nullptr, kMpiRefusesStreams},
#endif
    {EngineKind::opencl, "opencl",
#ifdef PAES_HAVE_OPENCL
     [](unsigned threads, std::optional<unsigned> device) {
       return gpu_engine(EngineKind::opencl, threads, device, false);
     }},
#else
     nullptr},
#endif
    {EngineKind::cuda, "cuda",
#ifdef PAES_HAVE_CUDA
     [](unsigned threads, std::optional<unsigned> device) {
       return gpu_engine(EngineKind::cuda, threads, device, false);
     }},
#else
     nullptr},
#endif
};

const EngineRow& row_of(EngineKind kind) {
  for (const EngineRow& row : kEngines) {
    if (row.kind == kind) return row;
  }
  throw Error("internal: an engine kind without a row in kEngines");
}

}  // namespace

void register_mpi_engine(MpiEngineMaker make) { g_mpi_engine.store(make); }

std::string_view engine_name(EngineKind kind) { return row_of(kind).name; }

std::optional<EngineKind> parse_engine(std::string_view name) {
  for (const EngineRow& row : kEngines) {
    if (row.make && row.name == name) return row.kind;
  }
  return std::nullopt;
}

std::string_view compiled_engines() {
  static const std::string names = [] {
    std::string list;
    for (const EngineRow& row : kEngines) {
      if (!row.make) continue;
      if (!list.empty()) list += ' ';
      list += row.name;
    }
    return list;
  }();
  return names;
}

void check_streams(EngineKind kind) {
  const std::string_view why = row_of(kind).refuses_streams;
  if (!why.empty()) throw usage_error(std::string(why));
}

std::vector<GpuDevice> list_gpu_devices([[maybe_unused]] EngineKind kind) {
  std::vector<GpuDevice> devices;
#ifdef PAES_HAVE_OPENCL
  if (kind == EngineKind::opencl) {
    for (const OpenClDeviceInfo& d : list_opencl_devices()) {
      devices.push_back({.index = d.index, .name = d.name, .type = d.type, .platform = d.platform,
                         .version = d.version, .compute_capability = {}, .compute_units = d.compute_units});
    }
  }
#endif
#ifdef PAES_HAVE_CUDA
  if (kind == EngineKind::cuda) {
    for (const CudaDeviceInfo& d : list_cuda_devices()) {
      devices.push_back({.index = d.index, .name = d.name, .type = "gpu", .platform = {}, .version = {},
                         .compute_capability = std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor),
                         .compute_units = d.multiprocessors});
    }
  }
#endif
  return devices;
}

std::string gpu_api_versions([[maybe_unused]] EngineKind kind) {
#ifdef PAES_HAVE_CUDA
  if (kind == EngineKind::cuda) return cuda_version_string();
#endif
  return {};
}

bool runs_on_gpu(const CipherSpec& spec) { return gpu::runs_on_gpu(spec); }

std::unique_ptr<GpuBackend> open_gpu_backend(EngineKind kind, [[maybe_unused]] std::optional<unsigned> device,
                                             [[maybe_unused]] std::size_t batch_bytes,
                                             [[maybe_unused]] const GpuGeometry& geometry) {
#ifdef PAES_HAVE_OPENCL
  if (kind == EngineKind::opencl) return open_direct<OpenClEngine, OpenClOptions>(device, batch_bytes, geometry);
#endif
#ifdef PAES_HAVE_CUDA
  if (kind == EngineKind::cuda) return open_direct<CudaEngine, CudaOptions>(device, batch_bytes, geometry);
#endif
  throw usage_error("this paes has no GPU backend for the " + std::string(engine_name(kind)) + " engine");
}

unsigned online_cpus() {
  // Online CPUs, but no more than this process may run on (taskset, cgroups).
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  const int usable = ::sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? CPU_COUNT(&allowed) : 0;
  const long count = usable > 0 ? std::min<long>(online, usable) : online;
  return count > 0 ? static_cast<unsigned>(count) : 1;
}

std::unique_ptr<Engine> make_engine(EngineKind kind, unsigned threads, std::optional<unsigned> device) {
  const EngineRow& row = row_of(kind);
  if (!row.make) throw usage_error("this paes was built without the " + std::string(row.name) + " engine");
  return row.make(threads, device);
}

std::unique_ptr<Engine> make_started_gpu_engine(EngineKind kind, unsigned threads,
                                                std::optional<unsigned> device) {
  return gpu_engine(kind, threads, device, true);
}

}  // namespace paes
