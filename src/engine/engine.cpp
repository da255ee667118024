// The engines this build has, in one table (kEngines): every engine name,
// make_engine and the stream rule come from here, the one file that asks
// which engines were built (PAES_MPI_BUILT: the mpi engine is in
// libpaes_mpi, which registers it when MPI starts). Engines split the work;
// which AES runs it (a CPU library, a GPU) is the job's cipher backend.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <string>

#include "engine/engines.hpp"
#include "paes/error.hpp"

namespace paes {

namespace {

unsigned cpu_threads_for(unsigned threads) { return threads == 0 ? online_cpus() : threads; }

// The engines, one row each: its kind, its name on the command line, how to
// make it (null where this build lacks it), and why it refuses streams (empty
// where it runs them). Names, parsing, the list that `paes info` prints,
// make_engine and the stream rule all come from this table.
using EngineFactory = std::unique_ptr<Engine> (*)(unsigned threads);

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
    "output files itself";

constexpr EngineRow kEngines[] = {
    {EngineKind::serial, "serial", [](unsigned) -> std::unique_ptr<Engine> {
       return std::make_unique<SerialEngine>();
     }},
    {EngineKind::threads, "threads", [](unsigned threads) -> std::unique_ptr<Engine> {
       return std::make_unique<ThreadsEngine>(cpu_threads_for(threads));
     }},
#ifdef PAES_MPI_BUILT
    {EngineKind::mpi, "mpi", [](unsigned threads) -> std::unique_ptr<Engine> {
       const MpiEngineMaker make = g_mpi_engine.load();
       if (!make) {
         throw usage_error("the mpi engine runs under mpiexec, in paes-mpi (paes hands it the command line): "
                           "this process started no MPI");
       }
       return make(threads);
     }, kMpiRefusesStreams},
#else
    {EngineKind::mpi, "mpi", nullptr, kMpiRefusesStreams},
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
  if (!why.empty()) throw usage_error(std::string(why), Remedy::files);
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
  const EngineRow& row = row_of(kind);
  if (!row.make) throw usage_error("this paes was built without the " + std::string(row.name) + " engine");
  return row.make(threads);
}

}  // namespace paes
