#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "paes/error.hpp"
#include "paes/io.hpp"

namespace paes {

OffsetSource::OffsetSource(Source& inner, std::uint64_t offset) : inner_(inner), offset_(offset) {
  if (offset > inner.size()) throw Error("internal: body offset beyond the end of the input");
}

namespace {

// A pipe holds 64 KiB by default, so a 1 MiB chunk took 16 reads (or writes),
// each a wake-up of the process at the other end. Grown to a chunk, one call
// moves what the peer wrote meanwhile. /proc/sys/fs/pipe-max-size (1 MiB by
// default) bounds it for users other than root; where the kernel refuses
// (that limit, or a user's pipe-user-pages-soft quota) the pipe keeps its size.
void grow_pipe(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) return;
  constexpr int kPipeBytes = 1 << 20;
  if (::fcntl(fd, F_GETPIPE_SZ) < kPipeBytes) (void)::fcntl(fd, F_SETPIPE_SZ, kPipeBytes);
}

}  // namespace

StreamReader::StreamReader(int fd, std::string name) : fd_(fd), name_(std::move(name)) {
  grow_pipe(fd_);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) throw system_error("reading " + name_);
}

StreamReader::StreamReader(int fd, std::string name, std::uint64_t len) : StreamReader(fd, std::move(name)) {
  file_left_ = len;
}

StreamReader::~StreamReader() { ::close(wake_fd_); }

void StreamReader::interrupt() {
  const std::uint64_t one = 1;
  // Cannot fail short of a full counter, which would still wake the reader.
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);
}

std::size_t StreamReader::read_full(std::uint8_t* dst, std::size_t len) {
  if (file_left_) len = static_cast<std::size_t>(std::min<std::uint64_t>(len, *file_left_));
  std::size_t done = 0;
  while (done < len) {
    // A pipe or a terminal: wait for input or for interrupt(), whichever
    // comes first. A file never keeps a read waiting, so it needs no poll.
    if (!file_left_) {
      pollfd ready[2] = {{fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
      if (::poll(ready, 2, -1) < 0) {
        if (errno == EINTR) continue;
        throw system_error("reading " + name_);
      }
      if (ready[1].revents != 0) throw Error("reading " + name_ + ": stopped after an error");
    }
    const ssize_t n = ::read(fd_, dst + done, len - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw system_error("reading " + name_);
    }
    if (n == 0) {
      if (file_left_) throw Error("reading " + name_ + ": file shrank while being read");
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (file_left_) *file_left_ -= done;
  return done;
}

StreamWriter::StreamWriter(int fd, std::string name) : fd_(fd), name_(std::move(name)) { grow_pipe(fd_); }

void StreamWriter::write_all(std::span<const std::uint8_t> src) {
  std::size_t done = 0;
  while (done < src.size()) {
    const ssize_t n = ::write(fd_, src.data() + done, src.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw system_error("writing " + name_);
    }
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace paes
