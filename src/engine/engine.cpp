#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "engine/auto_engine.hpp"
#include "engine/engines.hpp"
#include "paes/error.hpp"
#ifdef PAES_HAVE_MPI
#include "engine/mpi_engine.hpp"
#endif
#if defined(PAES_HAVE_OPENCL) || defined(PAES_HAVE_CUDA)
#include "engine/gpu_engine.hpp"
#endif
#ifdef PAES_HAVE_OPENCL
#include "engine/opencl_engine.hpp"
#endif
#ifdef PAES_HAVE_CUDA
#include "engine/cuda_engine.hpp"
#endif

namespace paes {

namespace {

#if defined(PAES_HAVE_OPENCL) || defined(PAES_HAVE_CUDA)
template <class Backend, class Options>
std::unique_ptr<Engine> gpu_engine(EngineKind kind, unsigned cpu_threads,
                                   std::optional<unsigned> device, bool start) {
  Options options;
  options.device_index = device;
  auto engine = std::make_unique<GpuEngine<Backend, Options>>(kind, options, cpu_threads);
  if (start) engine->backend();
  return engine;
}
#endif

// The opencl or cuda engine; with `start`, its device is started (and
// self-tested) now rather than at its first job. (The parameters go unused in
// a build without either.)
std::unique_ptr<Engine> gpu_engine(EngineKind kind, [[maybe_unused]] unsigned cpu_threads,
                                   [[maybe_unused]] std::optional<unsigned> device, [[maybe_unused]] bool start) {
  if (kind == EngineKind::opencl) {
#ifdef PAES_HAVE_OPENCL
    return gpu_engine<OpenClEngine, OpenClOptions>(kind, cpu_threads, device, start);
#else
    throw usage_error("this paes was built without OpenCL: no opencl engine");
#endif
  }
#ifdef PAES_HAVE_CUDA
  return gpu_engine<CudaEngine, CudaOptions>(kind, cpu_threads, device, start);
#else
  throw usage_error("this paes was built without CUDA: no cuda engine");
#endif
}

unsigned cpu_threads_for(unsigned threads) { return threads == 0 ? online_cpus() : threads; }

// The engines, one row each: its kind, its name on the command line, and how
// to make it (null where this build lacks it). Names, parsing, the list that
// `paes info` prints and make_engine all come from this table.
using EngineFactory = std::unique_ptr<Engine> (*)(unsigned threads, std::optional<unsigned> device);

struct EngineRow {
  EngineKind kind;
  std::string_view name;
  EngineFactory make;
};

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
#ifdef PAES_HAVE_MPI
    {EngineKind::mpi, "mpi", [](unsigned threads, std::optional<unsigned>) -> std::unique_ptr<Engine> {
       return std::make_unique<MpiEngine>(threads);
     }},
#else
    {EngineKind::mpi, "mpi", nullptr},
#endif
    {EngineKind::opencl, "opencl",
#ifdef PAES_HAVE_OPENCL
     [](unsigned threads, std::optional<unsigned> device) {
       return gpu_engine(EngineKind::opencl, cpu_threads_for(threads), device, false);
     }},
#else
     nullptr},
#endif
    {EngineKind::cuda, "cuda",
#ifdef PAES_HAVE_CUDA
     [](unsigned threads, std::optional<unsigned> device) {
       return gpu_engine(EngineKind::cuda, cpu_threads_for(threads), device, false);
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
  return gpu_engine(kind, cpu_threads_for(threads), device, true);
}

}  // namespace paes
