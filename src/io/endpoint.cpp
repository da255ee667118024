#include "paes/endpoint.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string_view>

#include "paes/error.hpp"

namespace paes {

bool names_stdio(const std::string& path) { return path.empty() || path == "-"; }

bool names_stream(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;  // InputFile says why
  return S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode);
}

std::optional<int> descriptor_named(const std::string& path) {
  for (const std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (!path.starts_with(prefix) || path.size() == prefix.size() || path.size() > prefix.size() + 9) continue;
    int fd = 0;
    for (const char c : std::string_view(path).substr(prefix.size())) {
      if (c < '0' || c > '9') return std::nullopt;
      fd = fd * 10 + (c - '0');
    }
    return fd;
  }
  return std::nullopt;
}

namespace {

// The pipe or socket a process substitution, >(...), hands paes as
// /dev/fd/N: this process's descriptor N, when it is open for writing.
// (<(...) is the read end: writing into it would lose the output.)
std::optional<int> writable_descriptor_pipe(const std::string& path) {
  const std::optional<int> fd = descriptor_named(path);
  struct stat st {};
  if (!fd || ::fstat(*fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) return std::nullopt;
  const int flags = ::fcntl(*fd, F_GETFL);
  if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY) return std::nullopt;
  return fd;
}

// Opens the stream `path` names with `flags` (a named pipe waits for the
// other end, as a shell's redirection does); throws naming it.
int open_stream(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) throw system_error(path);
  return fd;
}

// Runs the rest of an endpoint's constructor; where it throws, closes the
// descriptor the endpoint opened (-1: none), since no destructor runs for a
// constructor that throws.
template <class Rest>
void closing_on_failure(int owned_fd, const Rest& rest) {
  try {
    rest();
  } catch (...) {
    if (owned_fd >= 0) ::close(owned_fd);
    throw;
  }
}

}  // namespace

bool names_output_pipe(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return false;
  // A named pipe; or a process substitution's descriptor. Other links are
  // never followed to a pipe (one planted in a shared directory would hand
  // the output to whoever reads that pipe).
  return S_ISFIFO(st.st_mode) || writable_descriptor_pipe(path).has_value();
}

InputEndpoint::InputEndpoint(const std::string& path, bool refuse_terminal) {
  int fd = STDIN_FILENO;
  if (names_stdio(path)) {
    name_ = "stdin";
  } else if (names_stream(path)) {
    fd = owned_fd_ = open_stream(path, O_RDONLY);  // as openssl and age read a named pipe
    name_ = path;
  } else {
    file_ = std::make_unique<InputFile>(path);
    fd_ = file_->fd();
    name_ = path;
    return;
  }
  fd_ = fd;
  closing_on_failure(owned_fd_, [&] {
    if (refuse_terminal && ::isatty(fd)) {
      throw usage_error("refusing to read ciphertext from a terminal: give an input file or a pipe");
    }
    stream_ = std::make_unique<StreamReader>(fd, name_);
  });
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
  } else if (const std::optional<int> substituted = writable_descriptor_pipe(path)) {
    // Its own descriptor, duplicated (a socket can't be reopened by path).
    fd = ::fcntl(*substituted, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) throw system_error(path);
    owned_fd_ = fd;
    name_ = path;
  } else if (names_output_pipe(path)) {
    fd = owned_fd_ = open_stream(path, O_WRONLY);
    name_ = path;
  } else {
    file_ = std::make_unique<OutputFile>(path, options);
    name_ = path;
    return;
  }
  closing_on_failure(owned_fd_, [&] {
    // stdout appended to the input (paes < f >> f) would read its own output.
    refuse_writing_the_input(fd, options.input_fd, name_);
    stream_ = std::make_unique<StreamWriter>(fd, name_);
  });
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
