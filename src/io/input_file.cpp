#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "paes/error.hpp"
#include "paes/io.hpp"

namespace paes {

InputFile::InputFile(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw system_error(path);
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const Error error = system_error(path);
    ::close(fd_);
    throw error;
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd_);
    throw Error(path + ": is a directory");
  }
  if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
    ::close(fd_);
    throw Error(path + ": not a regular file");
  }
  permissions_ = st.st_mode & 0777;
  if (S_ISBLK(st.st_mode)) {
    const off_t end = ::lseek(fd_, 0, SEEK_END);
    if (end < 0) {
      const Error error = system_error(path);
      ::close(fd_);
      throw error;
    }
    size_ = static_cast<std::uint64_t>(end);
  } else {
    size_ = static_cast<std::uint64_t>(st.st_size);
  }
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::read_at(std::uint64_t offset, std::span<std::uint8_t> dst) {
  std::size_t done = 0;
  while (done < dst.size()) {
    const ssize_t n = ::pread(fd_, dst.data() + done, dst.size() - done,
                              static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw system_error("reading " + path_);
    }
    if (n == 0) throw Error("reading " + path_ + ": file shrank while being read");
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace paes
