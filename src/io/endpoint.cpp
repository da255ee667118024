#include "paes/endpoint.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paes/error.hpp"

namespace paes {

bool names_stdio(const std::string& path) { return path.empty() || path == "-"; }

bool names_stream(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;  // InputFile says why
  return S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode);
}

bool names_output_pipe(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return false;
  if (S_ISFIFO(st.st_mode)) return true;
  // A process substitution, >(...), is a link the shell made to its pipe;
  // other links are never followed to a pipe (one planted in a shared
  // directory would hand the output to whoever reads that pipe).
  const bool descriptor_link = path.starts_with("/dev/fd/") || path.starts_with("/proc/self/fd/");
  return S_ISLNK(st.st_mode) && descriptor_link && ::stat(path.c_str(), &st) == 0 &&
         (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

InputEndpoint::InputEndpoint(const std::string& path, bool refuse_terminal) {
  int fd = STDIN_FILENO;
  if (names_stdio(path)) {
    name_ = "stdin";
  } else if (names_stream(path)) {
    // Opening a named pipe waits for its writer, as openssl and age do.
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw system_error(path);
    owned_fd_ = fd;
    name_ = path;
  } else {
    file_ = std::make_unique<InputFile>(path);
    fd_ = file_->fd();
    name_ = path;
    return;
  }
  fd_ = fd;
  try {
    if (refuse_terminal && ::isatty(fd)) {
      throw usage_error("refusing to read ciphertext from a terminal: give an input file or a pipe");
    }
    stream_ = std::make_unique<StreamReader>(fd, name_);
  } catch (...) {
    if (owned_fd_ >= 0) ::close(owned_fd_);  // no destructor runs for a constructor that throws
    throw;
  }
}

InputEndpoint::~InputEndpoint() {
  stream_.reset();
  if (owned_fd_ >= 0) ::close(owned_fd_);
}

std::optional<std::uint64_t> InputEndpoint::size() const {
  if (file_) return file_->size();
  return std::nullopt;
}

std::optional<unsigned> InputEndpoint::permissions() const {
  if (file_) return file_->permissions();
  return std::nullopt;
}

std::size_t InputEndpoint::read_prefix(std::span<std::uint8_t> dst) {
  std::size_t got = 0;
  if (file_) {
    const std::uint64_t left = file_->size() > prefix_read_ ? file_->size() - prefix_read_ : 0;
    got = static_cast<std::size_t>(std::min<std::uint64_t>(left, dst.size()));
    file_->read_at(prefix_read_, dst.first(got));
  } else {
    got = stream_->read_full(dst.data(), dst.size());
  }
  prefix_read_ += got;
  return got;
}

OutputEndpoint::OutputEndpoint(const std::string& path, const OutputOptions& options, bool refuse_terminal) {
  int fd = STDOUT_FILENO;
  if (names_stdio(path)) {
    name_ = "stdout";
    if (refuse_terminal && ::isatty(STDOUT_FILENO)) {
      throw usage_error("refusing to write binary output to a terminal: give -o FILE or redirect stdout");
    }
  } else if (names_output_pipe(path)) {
    // Opening a named pipe waits for its reader, as a shell's redirection does.
    fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw system_error(path);
    owned_fd_ = fd;
    name_ = path;
  } else {
    file_ = std::make_unique<OutputFile>(path, options);
    name_ = path;
    return;
  }
  try {
    // stdout appended to the input (paes < f >> f) would read its own output.
    refuse_writing_the_input(fd, options.input_fd, name_);
    stream_ = std::make_unique<StreamWriter>(fd, name_);
  } catch (...) {
    if (owned_fd_ >= 0) ::close(owned_fd_);  // no destructor runs for a constructor that throws
    throw;
  }
}

OutputEndpoint::~OutputEndpoint() {
  stream_.reset();
  if (owned_fd_ >= 0) ::close(owned_fd_);
}

void OutputEndpoint::write_prefix(std::span<const std::uint8_t> src) {
  if (file_) {
    file_->write_at(prefix_written_, src);
  } else {
    stream_->write_all(src);
  }
  prefix_written_ += src.size();
}

void OutputEndpoint::commit() {
  if (file_) file_->commit();
}

}  // namespace paes
