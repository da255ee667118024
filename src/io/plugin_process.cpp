#include "io/plugin_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "paes/error.hpp"
#include "paes/io.hpp"
#include "util/printable.hpp"

extern char** environ;

namespace paes {
namespace {

constexpr std::size_t kMaxStderr = 64 * 1024;
// What a plugin may write ahead of paes reading it, while paes writes.
constexpr std::size_t kMaxPending = std::size_t{4} << 20;
// How long a plugin that was told everything may take to exit by itself.
constexpr auto kExitGrace = std::chrono::seconds(2);

// The process groups of the plugins running, for end_helper_processes().
std::array<std::atomic<pid_t>, 16> g_groups{};

int claim_slot(pid_t group) {
  for (std::size_t i = 0; i < g_groups.size(); ++i) {
    pid_t empty = 0;
    if (g_groups[i].compare_exchange_strong(empty, group)) return static_cast<int>(i);
  }
  return -1;
}

// The plugin's path: the first absolute entry of PATH that holds an
// executable regular file of that name.
std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string_view entries = path ? path : "";
  while (true) {
    const std::size_t colon = entries.find(':');
    const std::string_view entry = entries.substr(0, colon);
    if (entry.starts_with('/')) {  // never the working directory, spelled "" or "." or relative
      const std::string candidate = std::string(entry) + "/" + program;
      struct stat st {};
      if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
        return candidate;
      }
    }
    if (colon == std::string_view::npos) return {};
    entries.remove_prefix(colon + 1);
  }
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

bool end_helper_processes() noexcept {
  bool any = false;
  for (auto& group : g_groups) {
    const pid_t pid = group.exchange(0);
    if (pid > 0) {
      ::kill(-pid, SIGTERM);
      any = true;
    }
  }
  return any;
}

PluginProcess::PluginProcess(const std::string& name, std::string_view state_machine)
    : program_("age-plugin-" + name) {
  const std::string path = find_on_path(program_);
  if (path.empty()) {
    throw Error(program_ + " is not on PATH: install the age plugin " + name + " (the program " + program_ +
                ") to use its keys");
  }
  int sockets[2] = {-1, -1};
  int err_pipe[2] = {-1, -1};
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) throw system_error("socketpair");
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(sockets[0]);
    ::close(sockets[1]);
    throw system_error("pipe");
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_adddup2(&actions, sockets[1], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, sockets[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);  // paes' threads block signals the plugin must not
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  const std::string flag = "--age-plugin=" + std::string(state_machine);  // a command line, not a message
  std::vector<char*> argv{const_cast<char*>(program_.c_str()), const_cast<char*>(flag.c_str()), nullptr};
  const int spawned = ::posix_spawn(&pid_, path.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(sockets[1]);
  ::close(err_pipe[1]);
  io_fd_ = sockets[0];
  stderr_fd_ = err_pipe[0];
  ::fcntl(stderr_fd_, F_SETFL, O_NONBLOCK);  // paes' end only: the plugin's writes block as usual
  if (spawned != 0) {
    pid_ = -1;
    close_fd(io_fd_);
    close_fd(stderr_fd_);
    errno = spawned;
    throw system_error("could not start " + path);
  }
  slot_ = claim_slot(pid_);
}

PluginProcess::~PluginProcess() {
  if (pid_ > 0 && !exited_) wait_for_exit(true);
  if (slot_ >= 0) g_groups[static_cast<std::size_t>(slot_)].store(0);
  close_fd(io_fd_);
  close_fd(stderr_fd_);
}

void PluginProcess::wait_for_exit(bool stop) {
  const auto reaped = [this] { return ::waitpid(pid_, &status_, WNOHANG) == pid_; };
  bool done = reaped();
  if (stop && !done) {
    ::kill(-pid_, SIGTERM);
    stopped_ = true;
  }
  const auto deadline = std::chrono::steady_clock::now() + kExitGrace;
  while (!done && !(done = reaped())) {
    if (std::chrono::steady_clock::now() > deadline) {
      // Still running, told all it needs or told to end: its group goes,
      // so that nothing it started outlives paes' run.
      ::kill(-pid_, SIGKILL);
      stopped_ = true;
      ::waitpid(pid_, &status_, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  exited_ = true;
}

void PluginProcess::drain(bool wait_for_output) {
  while (true) {
    std::array<pollfd, 2> fds{{{io_fd_, POLLIN, 0}, {stderr_fd_, POLLIN, 0}}};
    const int ready = ::poll(fds.data(), stderr_fd_ >= 0 ? 2 : 1, wait_for_output ? -1 : 0);
    if (ready < 0) {
      if (errno == EINTR) continue;
      throw system_error("poll");
    }
    if (ready == 0) return;
    char chunk[4096];
    if (stderr_fd_ >= 0 && fds[1].revents != 0) {
      const ssize_t got = ::read(stderr_fd_, chunk, sizeof chunk);
      if (got < 0 && errno == EAGAIN) continue;
      if (got <= 0) {
        close_fd(stderr_fd_);
      } else {
        keep_stderr({chunk, static_cast<std::size_t>(got)});
      }
    }
    if (fds[0].revents != 0) {
      const ssize_t got = ::recv(io_fd_, chunk, sizeof chunk, MSG_DONTWAIT);
      if (got < 0 && errno != EAGAIN && errno != EINTR) throw system_error(program_ + ": read");
      if (got == 0) {  // its end: the caller's read sees it
        output_ended_ = true;
        return;
      }
      if (got > 0) {
        pending_.append(chunk, static_cast<std::size_t>(got));
        if (pending_.size() > kMaxPending) throw Error(program_ + ": wrote more than paes reads at once");
        return;
      }
    }
    if (!wait_for_output) continue;
  }
}

void PluginProcess::write(std::string_view bytes) {
  while (!bytes.empty()) {
    // POLLIN too: a plugin that writes instead of reading would otherwise
    // wait on a full socket while paes waits to write.
    std::array<pollfd, 2> fds{{{io_fd_, POLLOUT | POLLIN, 0}, {stderr_fd_, POLLIN, 0}}};
    if (::poll(fds.data(), stderr_fd_ >= 0 ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      throw system_error("poll");
    }
    if (fds[0].revents & (POLLERR | POLLHUP)) throw Error(program_ + " ended before paes was done talking to it");
    drain(false);  // what it writes meanwhile, and its stderr
    if (!(fds[0].revents & POLLOUT)) {
      // Its output ended while it reads no more: nothing will free the socket.
      if (output_ended_) throw Error(program_ + " ended before paes was done talking to it");
      continue;
    }
    const ssize_t sent = ::send(io_fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      if (errno == EPIPE || errno == ECONNRESET) throw Error(program_ + " ended before paes was done talking to it");
      throw system_error(program_ + ": write");
    }
    bytes.remove_prefix(static_cast<std::size_t>(sent));
  }
}

std::size_t PluginProcess::read(std::span<std::uint8_t> buffer) {
  while (pending_.empty()) {
    const std::size_t before = pending_.size();
    drain(true);
    if (pending_.size() == before) {
      // drain returned without output: the end of the plugin's output, or only stderr.
      std::uint8_t probe = 0;
      const ssize_t got = ::recv(io_fd_, &probe, 1, MSG_DONTWAIT | MSG_PEEK);
      if (got == 0) return 0;
    }
  }
  const std::size_t n = std::min(buffer.size(), pending_.size());
  std::memcpy(buffer.data(), pending_.data(), n);
  pending_.erase(0, n);
  return n;
}

std::optional<int> PluginProcess::finish(bool stop) {
  ::shutdown(io_fd_, SHUT_WR);  // its standard input ends
  if (!exited_) wait_for_exit(stop);
  if (slot_ >= 0) g_groups[static_cast<std::size_t>(slot_)].store(0);
  slot_ = -1;
  // What it said before it exited, without waiting for whatever it started
  // that still holds its stderr.
  char chunk[4096];
  for (ssize_t got; stderr_fd_ >= 0 && (got = ::read(stderr_fd_, chunk, sizeof chunk)) > 0;) {
    keep_stderr({chunk, static_cast<std::size_t>(got)});
  }
  if (stopped_ || !WIFEXITED(status_)) return std::nullopt;
  return WEXITSTATUS(status_);
}

void PluginProcess::keep_stderr(std::string_view text) {
  stderr_.append(text);
  if (stderr_.size() > kMaxStderr) stderr_.erase(0, stderr_.size() - kMaxStderr);
}

std::string PluginProcess::last_stderr_line() const {
  std::string_view text = stderr_;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  const std::size_t newline = text.find_last_of('\n');
  if (newline != std::string_view::npos) text.remove_prefix(newline + 1);
  return printable(text.substr(0, 300));
}

}  // namespace paes
