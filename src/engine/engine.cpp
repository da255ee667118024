#include <sched.h>
#include <unistd.h>

#include <algorithm>

#include "engine/engines.hpp"
#include "paes/error.hpp"
#ifdef PAES_HAVE_MPI
#include "engine/mpi_engine.hpp"
#endif

namespace paes {

std::string_view engine_name(EngineKind kind) {
  switch (kind) {
    case EngineKind::serial: return "serial";
    case EngineKind::threads: return "threads";
    case EngineKind::mpi: return "mpi";
  }
  return "?";
}

std::optional<EngineKind> parse_engine(std::string_view name) {
  if (name == "serial") return EngineKind::serial;
  if (name == "threads") return EngineKind::threads;
#ifdef PAES_HAVE_MPI
  if (name == "mpi") return EngineKind::mpi;
#endif
  return std::nullopt;
}

std::string_view compiled_engines() {
#ifdef PAES_HAVE_MPI
  return "serial threads mpi";
#else
  return "serial threads";
#endif
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

std::unique_ptr<Engine> make_engine(EngineKind kind, unsigned threads) {
  switch (kind) {
    case EngineKind::serial: return std::make_unique<SerialEngine>();
    case EngineKind::threads: return std::make_unique<ThreadsEngine>(threads == 0 ? online_cpus() : threads);
    case EngineKind::mpi:
#ifdef PAES_HAVE_MPI
      return std::make_unique<MpiEngine>(threads);
#else
      throw usage_error("this paes was built without MPI: no mpi engine");
#endif
  }
  return nullptr;
}

}  // namespace paes
