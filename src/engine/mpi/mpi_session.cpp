// The MPI session (include/paes/mpi.hpp): one per process, the MPI side of
// its life. The ranks' work on a job (the hand-off of rank 0's job, each
// rank's range, the failure and commit protocol) is in mpi_engine.cpp, whose
// top comment is the engine's design; what both files use (the message kinds
// rank 0 broadcasts, the collectives that wait without spinning) is in
// mpi_collectives.hpp.
//
// A session's life, on every rank:
//   - start: MPI at MPI_THREAD_FUNNELED (only the main thread calls MPI;
//     OpenMP threads run beside it), a launcher of another MPI refused, the
//     ranks of this node counted (a node's CPUs and GPUs are shared out by
//     them), and the mpi engine registered, so make_engine(mpi) works;
//   - rank 0 runs the command line; when it hands a job to the mpi engine, it
//     watches the temporary output (Watch, below) and sends the job. The
//     other ranks wait in serve() for rank 0's message: a job, which they run
//     (serve_job, mpi_engine.cpp), or none, with rank 0's exit status;
//   - after a job, rank 0 broadcasts its exit status, the commit's outcome
//     included (finish), which every rank exits with (wait_for_status);
//   - end: a blocking barrier, then MPI_Finalize under a deadline
//     (FinalizeDeadline, below).
#include <fcntl.h>
#include <mpi.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "engine/engines.hpp"
#include "engine/mpi/mpi_collectives.hpp"
#include "engine/mpi/mpi_engine.hpp"
#include "paes/error.hpp"
#include "paes/mpi.hpp"
#include "paes/secret.hpp"

namespace paes {
namespace {

MpiSession* g_session = nullptr;

}  // namespace

// When one rank dies (SIGKILL, a node lost), mpiexec kills every other rank
// with SIGKILL, rank 0 too, which can then remove nothing: the temporary
// output stayed behind. So rank 0 starts a watcher first: a shell in a
// session of its own (so mpiexec's kill doesn't reach it), reading a pipe
// only rank 0 writes. If rank 0 ends without saying "done", the pipe closes
// and the watcher removes the temporary. The temporary's name is unique
// (mkstemp), and after the commit it no longer exists, so a late removal
// can't touch anything else.
struct MpiSession::Watch {
  explicit Watch(const std::string& path) {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) return;  // no watcher: as before, a kill may leave it
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, ends[0], STDIN_FILENO);
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);
    const char* script = "IFS= read -r word; [ \"$word\" = done ] || rm -f -- \"$1\"";  // a command line, not a message
    char* const argv[] = {const_cast<char*>("sh"),
                          const_cast<char*>("-c"),  // a command line, not a message
                          const_cast<char*>(script), const_cast<char*>("paes-watch"), const_cast<char*>(path.c_str()),
                          nullptr};
    if (::posix_spawn(&pid_, "/bin/sh", &actions, &attributes, argv, environ) == 0) {
      fd_ = ends[1];
    } else {
      pid_ = -1;
      ::close(ends[1]);
    }
    ::close(ends[0]);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
  }
  // Rank 0 ends normally: the temporary is committed, or removed by OutputFile.
  ~Watch() {
    if (fd_ < 0) return;
    [[maybe_unused]] const ssize_t n = ::write(fd_, "done\n", 5);
    ::close(fd_);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;

  pid_t pid_ = -1;
  int fd_ = -1;
};

// MPI_Finalize can hang over TCP (issue 31; CLUSTER.md, "Jobs that hung after
// they were done"). MPICH 4.0's UCX netmod closes every endpoint, progresses
// until every close completes, then waits in a PMI barrier. A close over TCP
// can need the peer's progress, and a peer that finished its own closes first
// waits in that barrier, progressing nothing: the rank spins in its close
// forever, the others wait for it (fixed upstream in MPICH 4.2,
// pmodels/mpich#6596). A close completes when the peer's connection drops,
// so a rank whose MPI_Finalize has not returned after a while shuts its MPI
// connections down: the job is over by then (every rank has rank 0's status)
// and finalize has nothing left to deliver. Only connections MPI made: not the
// sockets the rank inherited (the launcher's), nor listening ones, nor other
// families (PMI talks to the launcher over a Unix socket).
namespace {

// A finalize that is not stuck takes milliseconds here (the ranks have met
// in a barrier just before it, and no message is in flight). A stuck one is
// stuck in most MPICH jobs over TCP at 3 ranks, so this is what such a job
// pays: 2 s made the soak's 3-rank median 2.24 s, 250 ms makes it 0.47 s.
constexpr auto kFinalizeGrace = std::chrono::milliseconds(250);

std::vector<ino_t> g_inherited_sockets;  // taken before MPI_Init

std::optional<ino_t> inet_socket(int fd) {
  int domain = 0;
  socklen_t len = sizeof domain;
  if (::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || (domain != AF_INET && domain != AF_INET6)) {
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::nullopt;
  return st.st_ino;
}

// This process's TCP (or other IP) sockets: descriptor and inode.
std::vector<std::pair<int, ino_t>> inet_sockets() {
  std::vector<std::pair<int, ino_t>> found;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    int fd = -1;
    if (std::from_chars(name.data(), name.data() + name.size(), fd).ec != std::errc{}) continue;
    if (const auto inode = inet_socket(fd)) found.emplace_back(fd, *inode);
  }
  return found;
}

void shut_down_mpi_connections() {
  for (const auto& [fd, inode] : inet_sockets()) {
    if (std::find(g_inherited_sockets.begin(), g_inherited_sockets.end(), inode) != g_inherited_sockets.end()) {
      continue;
    }
    int listening = 0;
    socklen_t len = sizeof listening;
    if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 && listening) continue;
    ::shutdown(fd, SHUT_RDWR);
  }
}

// Shuts the connections down once MPI_Finalize outlives the grace period.
class FinalizeDeadline {
 public:
  FinalizeDeadline()
      : thread_([this] {
          std::unique_lock lock(mutex_);
          if (!ended_.wait_for(lock, kFinalizeGrace, [this] { return done_; })) shut_down_mpi_connections();
        }) {}
  ~FinalizeDeadline() {
    {
      const std::lock_guard lock(mutex_);
      done_ = true;
    }
    ended_.notify_one();
    thread_.join();
  }
  FinalizeDeadline(const FinalizeDeadline&) = delete;
  FinalizeDeadline& operator=(const FinalizeDeadline&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable ended_;
  bool done_ = false;
  std::thread thread_;  // last: it starts once the others exist
};

}  // namespace

void MpiSession::watch_temporary(const std::string& path) {
  // Only a temporary file: an output written in place (/dev/null, a device)
  // is no temporary, and the watcher's rm must never reach it.
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  if (rank_ == 0 && !watch_) watch_ = std::make_unique<Watch>(path);
}

namespace {

// A launcher of another MPI than the one paes-mpi links (Open MPI's mpiexec
// starting an MPICH build, or the other way round) starts each rank as an MPI
// world of its own: N copies of the whole job racing on one output. Each
// launcher says in the environment how many ranks it started (Open MPI:
// OMPI_COMM_WORLD_SIZE; MPICH's hydra and Slurm's pmi2: PMI_SIZE; a PMIx
// launcher, srun --mpi=pmix, only each rank's PMIX_RANK, and Slurm the step's
// task count). The first of those that is set counts: a launcher run inside
// another's rank (mpiexec in an srun step) inherits the outer one's too.
// SLURM_NTASKS alone says nothing: a batch script of a many-task job runs
// paes-mpi as one process. Every rank, a world of one, refuses alike.
void refuse_a_launcher_of_another_mpi() {
  const auto number = [](const char* name) -> long {
    const char* value = std::getenv(name);
    return value != nullptr ? std::strtol(value, nullptr, 10) : -1;
  };
  long launched = number("OMPI_COMM_WORLD_SIZE");
  if (launched < 0) launched = number("PMI_SIZE");
  if (const long pmix_rank = number("PMIX_RANK"); launched < 0 && pmix_rank >= 0) {
    launched = std::max(pmix_rank + 1, number("SLURM_STEP_NUM_TASKS"));
  }
  if (launched <= 1) return;
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  // Its first line, its tabs and runs of spaces made one space ("MPICH Version:\t4.0.2").
  std::string library;
  for (const char c : std::string_view(version, static_cast<std::size_t>(std::max(0, length)))) {
    if (c == '\n' || c == '\0') break;  // Open MPI counts the terminating NUL in the length
    const bool space = c == ' ' || c == '\t';
    if (!space) library += c;
    else if (!library.empty() && library.back() != ' ') library += ' ';
  }
  MPI_Finalize();
  throw usage_error("the launcher started " + std::to_string(launched) +
                    " ranks, but each is an MPI world of one: this paes-mpi was built for " + library +
                    ", not the launcher's MPI. Start it with that MPI's mpiexec, or build paes against the "
                    "launcher's MPI (PAES_MPI_FLAVOR, see docs/CLUSTER.md)");
}

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  for (const auto& socket : inet_sockets()) g_inherited_sockets.push_back(socket.second);  // see FinalizeDeadline
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (size_ == 1) refuse_a_launcher_of_another_mpi();
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &node_rank_);
  MPI_Comm_size(node, &node_size_);
  MPI_Comm_free(&node);
  // Only the main thread calls MPI, but OpenMP threads run beside it: an MPI
  // that can't promise even that is not one paes may use. Every rank sees the
  // same library, so every rank stops here alike.
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    throw Error("this MPI gives threads level " + std::to_string(provided) +
                "; the mpi engine needs MPI_THREAD_FUNNELED (OpenMP threads beside MPI calls)");
  }
  g_session = this;
  register_mpi_engine([](unsigned threads) -> std::unique_ptr<Engine> { return std::make_unique<MpiEngine>(threads); });
}

MpiSession::~MpiSession() {
  if (rank_ == 0) finish(released_ ? 1 : 0);  // a job whose status was never sent failed
  g_session = nullptr;
  // The ranks leave their last sleeping wait up to 4 ms apart; a blocking
  // barrier (short: every rank is done) lets them enter MPI_Finalize together,
  // which makes its hang over TCP rarer (see FinalizeDeadline).
  MPI_Barrier(MPI_COMM_WORLD);
  const FinalizeDeadline deadline;
  MPI_Finalize();
}

MpiSession* MpiSession::current() { return g_session; }

void MpiSession::finish(int status) {
  if (rank_ != 0 || finished_) return;
  finished_ = true;
  watch_.reset();  // the job, its commit included, is over
  if (!released_) {  // no job: the ranks still wait for one
    released_ = true;
    broadcast_message(MpiMessage::done, nullptr, static_cast<std::uint64_t>(status));
    return;
  }
  std::uint64_t final_status = static_cast<std::uint64_t>(status);  // see wait_for_status
  bcast(&final_status, 1, MPI_UINT64_T, 0);
}

int MpiSession::serve() {
  std::uint64_t head[2] = {0, 0};
  bcast(head, 2, MPI_UINT64_T, 0);
  if (static_cast<MpiMessage>(head[0]) == MpiMessage::done) return static_cast<int>(head[1]);
  SecretBytes payload(head[1]);
  bcast(payload.data(), static_cast<int>(payload.size()), MPI_BYTE, 0);
  try {
    serve_job(payload);
  } catch (const Error&) {
    // Rank 0 prints the message every rank agreed on, and sends its status.
  }
  return wait_for_status();
}

int MpiSession::wait_for_status() {
  std::uint64_t status = 1;
  bcast(&status, 1, MPI_UINT64_T, 0);
  return static_cast<int>(status);
}

}  // namespace paes
