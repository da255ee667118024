#include "paes/endpoint.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <array>
#include <string>
#include <string_view>

#include "io/armored_file.hpp"
#include "paes/error.hpp"
#include "util/armor.hpp"

namespace paes {

bool names_stdio(const std::string& path) { return path.empty() || path == "-"; }

namespace {

// A file system whose regular files are made up as they are read: their size
// says nothing of what a read gives (0 in /proc, 4096 in /sys), so they are
// read to their end, as a stream. Read by their size, /proc/cpuinfo was
// sealed as an empty file, with success. On FUSE (lxcfs serves /proc/cpuinfo
// so in containers) a file reported empty is read so too; other FUSE files
// (sshfs) give their sizes and keep random access.
bool made_up_as_read(const std::string& path, const struct stat& st) {
  constexpr unsigned long kConfigFsMagic = 0x62656570;  // not in every linux/magic.h
  constexpr unsigned long kNfsdMagic = 0x6e667364;
  struct statfs fs {};
  if (::statfs(path.c_str(), &fs) != 0) return false;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case PROC_SUPER_MAGIC:
    case SYSFS_MAGIC:
    case DEBUGFS_MAGIC:
    case TRACEFS_MAGIC:
    case SECURITYFS_MAGIC:
    case SELINUX_MAGIC:
    case CGROUP_SUPER_MAGIC:
    case CGROUP2_SUPER_MAGIC:
    case BINFMTFS_MAGIC:
    case kConfigFsMagic:
    case kNfsdMagic:
      return true;
    case FUSE_SUPER_MAGIC:
      return st.st_size == 0;
    default:
      return false;
  }
}

}  // namespace

bool names_stream(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;  // InputFile says why
  if (S_ISREG(st.st_mode)) return made_up_as_read(path, st);
  return S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode);
}

std::optional<int> descriptor_named(const std::string& path) {
  // The standard descriptors' names in /dev (links to /proc/self/fd/N).
  if (path == "/dev/stdin") return STDIN_FILENO;
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
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

// The descriptor an output path names (/dev/stdout; /dev/fd/N, which a
// process substitution, >(...), hands paes), duplicated: a socket can't be
// reopened by path, and such a path is never a file to create or replace
// (with -f, the link /dev/stdout would have become a regular file, written
// instead of stdout).
int duplicate_output_descriptor(const std::string& path, int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) throw Error(path + ": descriptor " + std::to_string(fd) + " is not open");
  if ((flags & O_ACCMODE) == O_RDONLY) {
    // <(...) where >(...) was meant: writing there would lose the output.
    // (A standard descriptor the caller closed is held by /dev/null, open
    // the wrong way round, and is said the same way.)
    throw Error(path + ": descriptor " + std::to_string(fd) + " is not open for writing");
  }
  const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (copy < 0) throw system_error(path);
  return copy;
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

// The terminal `path` names (/dev/tty, /dev/pts/N), opened for writing, or
// -1: a terminal is written as a stream, under the terminal rule below,
// not through a temporary beside it. Not followed through a symbolic link,
// as a named pipe isn't.
int open_if_terminal(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) return -1;
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd >= 0 && ::isatty(fd) == 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

bool names_output_stream(const std::string& path) {
  if (descriptor_named(path)) return true;
  // A named pipe. Other links are never followed to a pipe (one planted in a
  // shared directory would hand the output to whoever reads that pipe).
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

InputEndpoint::InputEndpoint(const std::string& path, bool refuse_terminal, Armor armor) {
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
    bool armored = armor == Armor::openssl;
    if (armor == Armor::paes) {
      std::array<std::uint8_t, kArmorProbeLen> start{};
      const auto probe = std::span(start).first(std::min<std::uint64_t>(start.size(), file_->size()));
      file_->read_at(0, probe);
      armored = starts_with_armor(probe);
      // openssl's text stays in order: OpenSSL's decoder defines what it
      // reads, lines of other lengths and whitespace included.
      if (armored) armored_ = ArmoredSource::open(*file_, name_);
    }
    if (armored && !armored_) stream_ = std::make_unique<StreamReader>(fd_, name_, file_->size(), armor);
    return;
  }
  fd_ = fd;
  closing_on_failure(owned_fd_, [&] {
    if (refuse_terminal && ::isatty(fd)) {
      throw usage_error("refusing to read ciphertext from a terminal: give an input file or a pipe");
    }
    stream_ = std::make_unique<StreamReader>(fd, name_, armor);
  });
}

InputEndpoint::~InputEndpoint() {
  stream_.reset();
  if (owned_fd_ >= 0) ::close(owned_fd_);
}

Source& InputEndpoint::source() {
  if (armored_) return *armored_;
  return *file_;
}

std::optional<std::uint64_t> InputEndpoint::size() const {
  if (random_access()) return file_->size();
  return std::nullopt;
}

std::optional<unsigned> InputEndpoint::permissions() const {
  if (file_) return file_->permissions();
  return std::nullopt;
}

std::size_t InputEndpoint::read_prefix(std::span<std::uint8_t> dst) {
  std::size_t got = 0;
  if (readable_at_offsets()) {
    Source& bytes = source();
    const std::uint64_t left = bytes.size() > prefix_read_ ? bytes.size() - prefix_read_ : 0;
    got = static_cast<std::size_t>(std::min<std::uint64_t>(left, dst.size()));
    bytes.read_at(prefix_read_, dst.first(got));
  } else {
    got = stream_->read_full(dst.data(), dst.size());
  }
  prefix_read_ += got;
  return got;
}

OutputEndpoint::OutputEndpoint(const std::string& path, const OutputOptions& options, bool refuse_terminal,
                               Armor armor) {
  int fd = STDOUT_FILENO;
  if (names_stdio(path)) {
    name_ = "stdout";
  } else if (const std::optional<int> named = descriptor_named(path)) {
    fd = owned_fd_ = duplicate_output_descriptor(path, *named);
    name_ = path;
  } else if (names_output_stream(path)) {
    fd = owned_fd_ = open_stream(path, O_WRONLY);
    name_ = path;
  } else if (const int terminal = open_if_terminal(path); terminal >= 0) {
    fd = owned_fd_ = terminal;
    name_ = path;
  } else {
    file_ = std::make_unique<OutputFile>(path, options);
    name_ = path;
    if (armor != Armor::none) {
      // A device written in place takes its text in order, as a stream.
      struct stat st {};
      if (::fstat(file_->fd(), &st) == 0 && S_ISREG(st.st_mode)) {
        armored_ = std::make_unique<ArmoredSink>(*file_, armor);
      } else {
        stream_ = std::make_unique<StreamWriter>(file_->fd(), name_, armor);
      }
    }
    return;
  }
  closing_on_failure(owned_fd_, [&] {
    // One rule for a terminal, by any route (stdout, -o /dev/stdout, -o
    // /dev/tty): binary never reaches it. Ciphertext is refused at once;
    // a plaintext is written only as long as it is text (StreamWriter's
    // text_only), as age does.
    const bool terminal = armor == Armor::none && ::isatty(fd);
    if (refuse_terminal && terminal) {
      throw usage_error("refusing to write binary output to a terminal", Remedy::output_file);
    }
    // stdout appended to the input (paes < f >> f) would read its own output.
    refuse_writing_the_input(fd, options.input_fd, name_);
    stream_ = std::make_unique<StreamWriter>(fd, name_, armor);
    if (terminal) stream_->write_text_only();
  });
}

OutputEndpoint::~OutputEndpoint() {
  stream_.reset();
  if (owned_fd_ >= 0) ::close(owned_fd_);
}

Sink& OutputEndpoint::sink() {
  if (armored_) return *armored_;
  return *file_;
}

void OutputEndpoint::write_prefix(std::span<const std::uint8_t> src) {
  if (writable_at_offsets()) {
    sink().write_at(prefix_written_, src);
  } else {
    stream_->write_all(src);
  }
  prefix_written_ += src.size();
}

void OutputEndpoint::commit() {
  if (armored_) armored_->finish();
  if (stream_) stream_->finish();
  if (file_) file_->commit();
}

}  // namespace paes
