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
// self-tested) now rather than at its first job.
std::unique_ptr<Engine> gpu_engine(EngineKind kind, unsigned cpu_threads,
                                   std::optional<unsigned> device, bool start) {
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

}  // namespace

std::string_view engine_name(EngineKind kind) {
  switch (kind) {
    case EngineKind::serial: return "serial";
    case EngineKind::threads: return "threads";
    case EngineKind::mpi: return "mpi";
    case EngineKind::opencl: return "opencl";
    case EngineKind::cuda: return "cuda";
    case EngineKind::automatic: return "auto";
  }
  return "?";
}

std::optional<EngineKind> parse_engine(std::string_view name) {
  if (name == "serial") return EngineKind::serial;
  if (name == "threads") return EngineKind::threads;
  if (name == "auto") return EngineKind::automatic;
#ifdef PAES_HAVE_MPI
  if (name == "mpi") return EngineKind::mpi;
#endif
#ifdef PAES_HAVE_OPENCL
  if (name == "opencl") return EngineKind::opencl;
#endif
#ifdef PAES_HAVE_CUDA
  if (name == "cuda") return EngineKind::cuda;
#endif
  return std::nullopt;
}

std::string_view compiled_engines() {
  static const std::string engines = std::string("serial threads auto")
#ifdef PAES_HAVE_MPI
                                     + " mpi"
#endif
#ifdef PAES_HAVE_OPENCL
                                     + " opencl"
#endif
#ifdef PAES_HAVE_CUDA
                                     + " cuda"
#endif
      ;
  return engines;
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
  const unsigned cpu_threads = cpu_threads_for(threads);
  switch (kind) {
    case EngineKind::serial: return std::make_unique<SerialEngine>();
    case EngineKind::threads: return std::make_unique<ThreadsEngine>(cpu_threads);
    case EngineKind::mpi:
#ifdef PAES_HAVE_MPI
      return std::make_unique<MpiEngine>(threads);
#else
      throw usage_error("this paes was built without MPI: no mpi engine");
#endif
    case EngineKind::opencl:
    case EngineKind::cuda: return gpu_engine(kind, cpu_threads, device, false);
    case EngineKind::automatic: return std::make_unique<AutoEngine>(threads, device);
  }
  return nullptr;
}

std::unique_ptr<Engine> make_started_gpu_engine(EngineKind kind, unsigned threads,
                                                std::optional<unsigned> device) {
  return gpu_engine(kind, cpu_threads_for(threads), device, true);
}

}  // namespace paes
