// paes: parallel AES for bulk data (and paes-mpi, the same with the mpi
// engine). main() starts MPI when the command line asks for it (paes hands
// such a command line to paes-mpi), parses and runs the command (cli/command_line.hpp), and turns
// every failure into one line on stderr and an exit status: 0 success,
// 1 a failed operation, 2 a usage error.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <new>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "cli/command_line.hpp"
#include "cli/descriptors.hpp"
#include "cli/progress.hpp"
#include "cli/say.hpp"
#include "paes/error.hpp"
#include "paes/io.hpp"
#include "paes/notice.hpp"
#include "util/core_dumps.hpp"
#include "util/openssl_set_up.hpp"
#include "util/printable.hpp"
#ifdef PAES_HAVE_MPI
#include "paes/mpi.hpp"
#endif

namespace {

int fail(const std::string& message, int status) {
  paes::cli::say("paes: " + paes::printable(message) + '\n');
  return status;
}

// Whether the command line asks for --engine mpi. Checked before parsing,
// because every rank must initialise MPI before anything else.
bool mpi_requested(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--engine=mpi" || (arg == "--engine" && i + 1 < argc && std::strcmp(argv[i + 1], "mpi") == 0)) {
      return true;
    }
  }
  return false;
}


int run_command_line(int argc, char** argv);

// The signals that end paes remove its temporary output first, then end it as
// they would have. SIGPIPE among them: a --progress whose stderr pipe closed
// (or a reader of stdout that left) ends paes, as it ends any tool, but not
// with its temporary output left behind. A signal ignored when paes started
// (nohup, a script's background job) stays ignored: the caller asked paes to
// survive it. Which
// ones were ignored is read before MPI starts, since an MPI library may
// install handlers of its own (and paes-mpi learns it from paes, below).
constexpr int kEndingSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
// Signals that end a process by default and that paes takes over only while
// nobody else has (a library's handler, a sanitizer's SIGSEGV, a profiler's
// SIGPROF, a signal ignored at start stay as they were): a CPU-time limit
// (ulimit -t), `timeout -s ALRM`, a stray kill -USR1, SIGABRT
// (std::terminate, a failed assertion in a library) and a crash would
// otherwise leave the temporary output behind, with partial plaintext in it
// when decrypting. (The handler only unlinks and clears the progress line:
// a crash's state is not touched, and it still dies of its signal, with no
// core: util/core_dumps.)
constexpr int kDefaultEndingSignals[] = {SIGXCPU, SIGALRM, SIGVTALRM, SIGPROF, SIGUSR1, SIGUSR2,
                                         SIGABRT, SIGSEGV, SIGBUS,    SIGFPE,  SIGILL,  SIGSYS};

extern "C" void remove_output_and_die(int sig) {
  paes::remove_pending_output();
  paes::end_helper_processes();  // an age plugin's group, which the terminal's Ctrl-C doesn't reach
  paes::cli::clear_progress_line_at_exit();  // the shell's next text starts on a clean line
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// paes-mpi links MPICH and UCX, whose load-time set-up replaces SIGHUP's
// disposition (UCX's debug signal) before main() can look at it. paes, which
// loads no MPI, hands its own snapshot to paes-mpi through this variable
// (the ending signals it found ignored, as a mask of kEndingSignals' indexes).
constexpr const char* kIgnoredAtStart = "PAES_SIGNALS_IGNORED_AT_START";

class EndingSignals {
 public:
  EndingSignals() {
    for (std::size_t i = 0; i < std::size(kEndingSignals); ++i) {
      struct sigaction previous {};
      ignored_[i] = sigaction(kEndingSignals[i], nullptr, &previous) == 0 && previous.sa_handler == SIG_IGN;
    }
    if (const char* handed = std::getenv(kIgnoredAtStart)) {
      const unsigned long mask = std::strtoul(handed, nullptr, 10);
      for (std::size_t i = 0; i < std::size(kEndingSignals); ++i) ignored_[i] = ignored_[i] || (mask >> i & 1) != 0;
      ::unsetenv(kIgnoredAtStart);  // for this process only, not its children
    }
  }
  // Ignored signals are ignored again (a library may have replaced that);
  // the others remove the output and end paes.
  void install() const {
    struct sigaction action {};
    action.sa_handler = remove_output_and_die;
    sigemptyset(&action.sa_mask);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    for (std::size_t i = 0; i < std::size(kEndingSignals); ++i) {
      sigaction(kEndingSignals[i], ignored_[i] ? &ignore : &action, nullptr);
    }
    for (const int sig : kDefaultEndingSignals) {
      struct sigaction current {};
      if (sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
        sigaction(sig, &action, nullptr);
      }
    }
  }
  // The snapshot, for a program this one execs (kIgnoredAtStart).
  void hand_down() const {
    unsigned long mask = 0;
    for (std::size_t i = 0; i < std::size(kEndingSignals); ++i) mask |= (ignored_[i] ? 1ul : 0ul) << i;
    ::setenv(kIgnoredAtStart, std::to_string(mask).c_str(), 1);
  }

 private:
  bool ignored_[std::size(kEndingSignals)] = {};
};

// This process's MPI world size, as the launchers tell each process they
// start (MPICH's Hydra and Slurm: PMI_SIZE; Open MPI: OMPI_COMM_WORLD_SIZE),
// and its rank; 1 and 0 outside a launcher.
std::pair<long, long> launched_world() {
  for (const auto& [size_name, rank_name] : {std::pair{"PMI_SIZE", "PMI_RANK"},
                                             std::pair{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"}}) {
    if (const char* size = std::getenv(size_name)) {
      const char* rank = std::getenv(rank_name);
      return {std::strtol(size, nullptr, 10), rank != nullptr ? std::strtol(rank, nullptr, 10) : 0};
    }
  }
  return {1, 0};
}

// Whether the launcher's own process started this one (mpiexec -n N paes),
// rather than a script a rank runs (mpiexec -n N sh -c 'paes ... part$PMI_RANK',
// each rank a job of its own, which is no mistake).
bool started_by_mpi_launcher() {
  std::ifstream comm("/proc/" + std::to_string(::getppid()) + "/comm");
  std::string parent;
  std::getline(comm, parent);
  for (const char* launcher : {"hydra_pmi_proxy", "orted", "prted", "slurmstepd", "orterun", "prterun"}) {
    if (parent == launcher) return true;
  }
  // Debian names each MPI's launcher by its MPI: mpiexec.openmpi, mpirun.mpich.
  for (const std::string_view launcher : {"mpiexec", "mpirun"}) {
    if (parent.starts_with(launcher) && (parent.size() == launcher.size() || parent[launcher.size()] == '.')) {
      return true;
    }
  }
  return false;
}

// Under mpiexec with several ranks but without --engine mpi, each rank ran
// the whole job on its own: the same output written N times, or refused by
// all but one ("already exists"), and mpiexec failing though the output was
// written. Refused: rank 0 says why and ends with status 2, the job's.
//
// The other ranks end with status 0. Open MPI aborts the job when any rank
// ends with another status, killing the ranks still running and dropping
// what their stderr pipes held: a rank 1 ending with 2 before rank 0 had
// written made the refusal end silently (3 runs in 60, under load).
std::optional<int> ranks_without_engine_mpi(int argc, char** argv) {
  const auto [size, rank] = launched_world();
  if (size <= 1 || argc < 2 || !started_by_mpi_launcher()) return std::nullopt;
  const std::string_view command = argv[1];
  if (command != "encrypt" && command != "decrypt") return std::nullopt;
  if (rank != 0) return 0;
  return fail("this is one of " + std::to_string(size) +
                  " ranks mpiexec started, and without --engine mpi each would run the whole job: add --engine mpi",
              2);
}

// A standard descriptor the caller closed (paes <&-) would go to the first
// file paes opens: an eventfd became "stdin", and paes waited on it forever.
// Each closed one is held by /dev/null opened the wrong way round (stdin
// write-only, stdout read-only), so that using it fails as a closed one does
// ("reading stdin: Bad file descriptor"); a closed stderr discards.
void hold_closed_standard_descriptors() {
  for (const int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int held = ::open("/dev/null", fd == STDOUT_FILENO ? O_RDONLY : O_WRONLY);
    if (held >= 0 && held != fd) {  // the lowest free descriptor is this one, unless a lower one was shut too
      ::dup2(held, fd);
      ::close(held);
    }
  }
}

#ifndef PAES_HAVE_MPI
// paes has no MPI: a run that doesn't ask for it neither loads nor starts an
// MPI library. --engine mpi hands the command line to paes-mpi, the same tool
// with the mpi engine, installed beside it; exec keeps this process (its pid,
// mpiexec's environment, the signals it ignores, which EndingSignals also
// hands down), so each rank mpiexec started becomes a rank of paes-mpi. Returns only when that fails.
int hand_over_to_paes_mpi(char** argv, const EndingSignals& ending_signals) {
  char self[4096];
  const ssize_t len = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return fail("--engine mpi: cannot find paes' own path to start paes-mpi", 1);
  std::string path(self, static_cast<std::size_t>(len));
  path = path.substr(0, path.rfind('/') + 1) + "paes-mpi";
  argv[0] = path.data();
  ending_signals.hand_down();
  ::execv(path.c_str(), argv);
  if (errno == ENOENT) {
    // Not built (no MPI was found), or not installed beside this paes.
    return fail("--engine mpi needs paes-mpi beside paes, and there is none at " + path +
                    " (a build without MPI makes none)",
                2);
  }
  return fail("--engine mpi: starting " + path + ": " + std::strerror(errno), 1);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  paes::cli::remember_inherited_descriptors(argc, argv);  // before paes opens any of its own
  hold_closed_standard_descriptors();           // before anything opens a file
  paes::set_up_openssl_for_one_command();       // before OpenSSL's first use
  // First, before any rank or command holds a key (util/core_dumps.hpp).
  paes::forbid_core_dumps();
  // A write past the file size limit (ulimit -f) raises SIGXFSZ, whose default
  // action kills paes without a word and leaves its temporary output behind.
  // Ignored, on every rank, the write fails with EFBIG instead, and paes
  // reports "File too large" and cleans up as after any write error.
  std::signal(SIGXFSZ, SIG_IGN);
  // A library that ends the process with exit() (libgomp when it can't start
  // its threads) runs no destructor: the temporary output goes here, and the
  // library's own line gets paes' word on what is left. After a normal end
  // there is none to remove (committed, or removed on failure).
  std::atexit([] {
    paes::cli::clear_progress_line_at_exit();
    if (paes::remove_pending_output()) {
      static constexpr char kSaid[] = "paes: stopped before the output was complete: nothing was written\n";
      [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, kSaid, sizeof kSaid - 1);
    }
  });
  // The library's notes and warnings (paes/notice.hpp), each a line on stderr.
  // Each line written at once: notices may come from several threads.
  paes::set_notice_handler([](paes::NoticeLevel level, const std::string& text) {
    paes::cli::say(std::string(level == paes::NoticeLevel::warning ? "paes: warning: " : "paes: note: ") +
                   paes::printable(text) + '\n');
  });
  const EndingSignals ending_signals;
  if (!mpi_requested(argc, argv)) {
    if (const std::optional<int> refused = ranks_without_engine_mpi(argc, argv)) return *refused;
  }
#ifdef PAES_HAVE_MPI
  // Under --engine mpi, rank 0 runs the command line and hands the job to the
  // other ranks, which only serve (see engine/mpi/mpi_engine.cpp).
  std::unique_ptr<paes::MpiSession> session;
  if (mpi_requested(argc, argv)) {
    try {
      session = std::make_unique<paes::MpiSession>(&argc, &argv);
    } catch (const paes::Error& e) {
      return fail(e.what(), e.kind() == paes::ErrorKind::usage ? 2 : 1);
    }
    if (session->rank() != 0) return session->serve();
  }
  ending_signals.install();
  const int status = run_command_line(argc, argv);
  if (session) session->finish(status);
  return status;
#else
  if (mpi_requested(argc, argv)) return hand_over_to_paes_mpi(argv, ending_signals);
  ending_signals.install();
  return run_command_line(argc, argv);
#endif
}

namespace {

int run_command_line(int argc, char** argv) {
  try {
    // The command named first is built alone; what is not a command to run
    // (help, the version, a usage error) is parsed again with every command,
    // whose words it uses.
    auto command_line = std::make_unique<paes::cli::CommandLine>(argc > 1 ? argv[1] : "");
    paes::cli::ParseOutcome parsed = command_line->parse(argc, argv);
    if (parsed.command == paes::cli::Command::none && command_line->partial()) {
      command_line = std::make_unique<paes::cli::CommandLine>();
      parsed = command_line->parse(argc, argv);
    }
    if (parsed.command == paes::cli::Command::none) {
      std::cout << parsed.out;
      if (!parsed.error.empty()) return fail(parsed.error, parsed.exit_status);
      paes::cli::flush_standard_output();
      return parsed.exit_status;
    }
    const int status = command_line->run(parsed.command);
    // Here, not at exit: stdio's last write would fail there unseen, and
    // `paes info > /dev/full` end with status 0.
    paes::cli::flush_standard_output();
    return status;
  } catch (const paes::Error& e) {
    return fail(e.what() + paes::cli::in_flags(e.remedy()), e.kind() == paes::ErrorKind::usage ? 2 : 1);
  } catch (const std::bad_alloc&) {
    return fail("out of memory", 1);
  } catch (const std::exception& e) {
    return fail(e.what(), 1);
  }
}

}  // namespace
