// OutputFile: nothing appears under the final name until commit().
//
// The temporary lives beside the target (".NAME.paes-XXXXXX") so that commit is
// one rename within a directory. The library installs no signal handler: a
// program's handler calls remove_pending_output() (the paes tool does, for
// SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE and others, in cli/main.cpp). That may
// only touch async-signal-safe state, so each path sits in a static slot
// armed by a lock-free atomic.
//
// commit() fsyncs the temporary before the rename and the directory after it,
// so a crash at any moment leaves either the old state or the complete new
// file under the final name, never a renamed file whose data never reached
// the disk.
//
// The temporary is created 0600 (mkstemp) and gets its final permissions, and
// a replaced file's owner and group, only at commit: it is never readable by
// more users than the final file, and the MPI ranks, running as this user,
// can still open it to write.
//
// The existing name is looked at with lstat: a symbolic link planted under the
// output's name is an existing output, never followed (to /dev/null, it would
// swallow the output and report success; elsewhere, it would write where the
// user did not say).
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iterator>
#include <mutex>
#include <set>
#include <string_view>
#include <utility>

#include "paes/error.hpp"
#include "paes/io.hpp"
#include "paes/notice.hpp"

namespace paes {
namespace {

// The temporaries being written, for remove_pending_output() in a signal
// handler: a fixed table whose slots are claimed and let go through
// lock-free atomics, so the handler reads only what async-signal-safe code
// may, and outputs written at once (from several threads) each hold their
// own. (One shared slot was raced over by two threads' paths, and a file
// that finished disarmed the one still being written.) Outputs beyond the
// table's size go unprotected from signals; a destructor still removes them.
// Each slot's word is its generation (bumped at every claim) and its phase:
// the handler copies an armed slot's path, then checks that the word is
// unchanged, so a path let go and rewritten meanwhile (another output's) is
// never unlinked torn.
enum CleanupPhase : unsigned { kFree, kFilling, kArmed };
constexpr unsigned kPhaseBits = 2;
constexpr unsigned phase_of(unsigned word) { return word & ((1u << kPhaseBits) - 1); }
static_assert(std::atomic<unsigned>::is_always_lock_free, "a signal handler reads the slots");
static_assert(kFree == 0, "a table of zeros is free");
// The words apart from the paths, and all zeros before any code runs: a scan
// for a free or an armed slot reads one cache line, and no page of the 256 KiB
// of paths is touched until a slot is used. (Slots of a word and a path each,
// set at start-up, cost every run 64 page faults, and the exit's scan 64 more.)
constexpr std::size_t kCleanupSlots = 64;
constinit std::atomic<unsigned> g_cleanup_word[kCleanupSlots]{};
constinit char g_cleanup_path[kCleanupSlots][4096]{};

// The slot now holding `path`, or -1 when every slot is taken.
int arm_cleanup(const std::string& path) {
  if (path.size() >= sizeof g_cleanup_path[0]) throw Error(path + ": path too long");
  for (std::size_t i = 0; i < kCleanupSlots; ++i) {
    std::atomic<unsigned>& slot_word = g_cleanup_word[i];
    unsigned word = slot_word.load();
    if (phase_of(word) != kFree) continue;
    const unsigned generation = (word >> kPhaseBits) + 1;
    if (!slot_word.compare_exchange_strong(word, generation << kPhaseBits | kFilling)) continue;
    std::memcpy(g_cleanup_path[i], path.c_str(), path.size() + 1);
    slot_word.store(generation << kPhaseBits | kArmed, std::memory_order_release);
    return static_cast<int>(i);
  }
  return -1;
}

void disarm_cleanup(int& slot) {
  if (slot < 0) return;
  std::atomic<unsigned>& word = g_cleanup_word[slot];
  word.store(word.load() >> kPhaseBits << kPhaseBits | kFree, std::memory_order_release);
  slot = -1;
}

// The process's umask, read without changing it. umask(2) reads only by
// setting: with it 0 for a moment, a file another thread made meanwhile (a
// data set writes several outputs at once) took 0666, and a second reader
// read the 0 and left it set (cli_data_sets.Attributes, under load).
// /proc/self/status shows it (Linux 4.7 on); without it, the set and the
// restore run under a lock, which keeps paes' own readers apart.
mode_t current_umask() {
  const int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char status[4096];
    const ssize_t n = ::read(fd, status, sizeof status - 1);
    ::close(fd);
    if (n > 0) {
      status[n] = '\0';
      if (const char* field = std::strstr(status, "\nUmask:")) {
        char* end = nullptr;
        const unsigned long mask = std::strtoul(field + 7, &end, 8);
        if (end != field + 7) return static_cast<mode_t>(mask & 0777);
      }
    }
  }
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

Error exists_error(const std::string& path) { return Error(path + ": already exists", ErrorKind::failure, Remedy::force); }

// Opens an existing device to write in place. /dev/null, named so, is the
// usual way to discard output; any other device takes -f, since what was on
// it is overwritten in place, not replaced once the output is complete. A
// terminal is refused even with -f (output is binary); telling one apart takes
// opening it, so a character device is opened, but not written, before a
// refusal. A block device is never a terminal: it is refused unopened.
Error device_needs_force_error(const std::string& path) {
  return Error(path + ": is a device, written in place only when forced", ErrorKind::failure, Remedy::force);
}

int open_device(const std::string& path, const struct stat& seen, bool force) {
  const bool needs_force = !force && path != "/dev/null";
  const Error needs_force_error = device_needs_force_error(path);
  if (needs_force && S_ISBLK(seen.st_mode)) throw needs_force_error;
  // O_NOFOLLOW and the check of what was opened: the name must still be the
  // device lstat saw, not a link or a FIFO put in its place meanwhile
  // (O_NONBLOCK: opening a FIFO without a reader would wait forever).
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw system_error(path);
  const auto fail = [fd](const Error& error) {
    ::close(fd);
    throw error;
  };
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(system_error(path));
  if ((st.st_mode & S_IFMT) != (seen.st_mode & S_IFMT) || st.st_rdev != seen.st_rdev) {
    fail(Error(path + ": changed while being opened"));
  }
  // A usage error, as binary output to a terminal on stdout is (io/endpoint.cpp).
  if (::isatty(fd)) fail(usage_error(path + ": refusing to write binary output to a terminal"));
  if (needs_force) fail(needs_force_error);
  if (::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) fail(system_error(path));
  return fd;
}

// Gives the temporary `fd` the permissions, owner and group it must have under
// `path` (see OutputOptions). Returns false, with errno set, when they can't
// be set.
bool set_final_attributes(int fd, const std::string& path, const OutputOptions& options) {
  mode_t mode = static_cast<mode_t>(options.mode) & 0777 & ~current_umask();
  struct stat old {};
  if (options.force && options.keep_replaced && ::lstat(path.c_str(), &old) == 0 && S_ISREG(old.st_mode)) {
    // Not the set-id bits: they were granted to a program, not to this content.
    mode = old.st_mode & 0777;
    // Only root may give a file away, and a user may set only a group of
    // theirs: then, as cp does, carry on with the file ours. Our owner bits
    // grant nothing new (we wrote the content), but group bits meant for
    // another group would open it to ours.
    if (::fchown(fd, old.st_uid, old.st_gid) != 0 && ::fchown(fd, static_cast<uid_t>(-1), old.st_gid) != 0) {
      mode &= ~static_cast<mode_t>(S_IRWXG);
    }
  }
  if (options.times && ::futimens(fd, options.times->data()) != 0) return false;
  return ::fchmod(fd, mode) == 0;
}

// Links temp to path only if path doesn't exist, for filesystems without
// renameat2(RENAME_NOREPLACE).
int rename_noreplace(const char* from, const char* to) {
  if (::renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -1;
  if (::link(from, to) != 0) return -1;
  ::unlink(from);
  return 0;
}

// Makes a rename in `dir` durable. A directory paes may write but not read
// (mode -wx) can't be opened to sync, and EINVAL means the filesystem can't
// sync directories: neither is a failure of this output.
int sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  const int synced = ::fsync(fd) == 0 || errno == EINVAL ? 0 : -1;
  const int saved_errno = errno;
  ::close(fd);
  errno = saved_errno;
  return synced;
}

// What an existing name `path` (st: its lstat) means for an output: throws
// where it is refused; returns whether it is a device, written in place.
bool existing_output_is_device(const std::string& path, const struct stat& st, bool force) {
  if (S_ISDIR(st.st_mode)) throw Error(path + ": is a directory");
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return true;
  if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) throw Error(path + ": not a regular file, device or pipe");
  if (!force) {
    if (S_ISLNK(st.st_mode)) {
      throw Error(path + ": already exists as a symbolic link, which forcing replaces, not what it points to",
                  ErrorKind::failure, Remedy::force);
    }
    throw exists_error(path);
  }
  return false;
}

// The directory a new `path` goes in, ending in '/', or "." for a bare name.
std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash + 1);
}

}  // namespace

bool remove_pending_output() noexcept {
  bool removed = false;
  for (std::size_t slot = 0; slot < kCleanupSlots; ++slot) {
    const unsigned word = g_cleanup_word[slot].load(std::memory_order_acquire);
    if (phase_of(word) != kArmed) continue;
    const char* armed = g_cleanup_path[slot];
    char path[sizeof g_cleanup_path[slot]];
    std::size_t i = 0;
    for (; i + 1 < sizeof path && armed[i] != '\0'; ++i) path[i] = armed[i];  // no library call: a handler
    path[i] = '\0';
    std::atomic_thread_fence(std::memory_order_acquire);
    if (g_cleanup_word[slot].load(std::memory_order_relaxed) != word) continue;  // let go, maybe rewritten, meanwhile
    ::unlink(path);
    removed = true;
  }
  return removed;
}

void check_output_path(const std::string& path, const OutputOptions& options) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    // A block device without -f is refused as OutputFile will; a character
    // device is left to it (telling a terminal, refused even with -f, takes
    // opening it).
    if (existing_output_is_device(path, st, options.force) && !options.force && S_ISBLK(st.st_mode)) {
      throw device_needs_force_error(path);
    }
    return;
  }
  if (errno != ENOENT) throw system_error(path);
  const std::string dir = directory_of(path);
  if (::stat(dir.c_str(), &st) != 0) throw system_error("cannot create the output in " + dir);
  if (!S_ISDIR(st.st_mode)) throw Error("cannot create the output in " + dir + ": not a directory");
}

void refuse_writing_the_input(int fd, int input_fd, const std::string& name) {
  struct stat out {};
  struct stat in {};
  if (input_fd < 0 || ::fstat(fd, &out) != 0 || ::fstat(input_fd, &in) != 0) return;
  const bool same_file = S_ISREG(out.st_mode) && S_ISREG(in.st_mode) && out.st_dev == in.st_dev &&
                         out.st_ino == in.st_ino;
  const bool same_device = S_ISBLK(out.st_mode) && S_ISBLK(in.st_mode) && out.st_rdev == in.st_rdev;
  // A pipe paes reads and writes itself never ends: paes holds a writer.
  const bool same_pipe = S_ISFIFO(out.st_mode) && S_ISFIFO(in.st_mode) && out.st_dev == in.st_dev &&
                         out.st_ino == in.st_ino;
  if (same_pipe) throw Error(name + " is also the input: a pipe paes wrote into itself would never end");
  if (same_file || same_device) {
    if (same_device) {
      throw Error(name + " is also the input: written in place, it would be overwritten before it is read (write "
                  "to another device or file)");
    }
    throw Error(name + " is also the input: written in place, it would be overwritten before it is read; named as "
                "a file and forced, the output replaces even the input, once it is complete",
                ErrorKind::failure, Remedy::force);
  }
}

namespace {

// A temporary unlocked for this long is a killed paes's: a live one locks
// its temporary from the moment it creates it, and a temporary is created
// and locked in two calls, so one that is only moments old may be a live
// paes between them.
constexpr int kStaleAfterSeconds = 60;

// A directory is listed for stale temporaries once per process, and not at
// all past this size (about 10,000 names on ext4 and tmpfs): every output
// would otherwise read the whole directory, and a run over the files of a
// large one would take time in proportion to their square.
constexpr off_t kMostListedDirectoryBytes = off_t{256} << 10;

// Whether `name` is one of paes' temporaries: ".NAME.paes-XXXXXX".
// Removes the temporaries ".NAME.paes-XXXXXX" in `dir` (empty or ending in
// '/') that no live paes holds: SIGKILL (or a crash, or a lost node) ends a
// paes before it can remove its own, which stayed, hidden, as large as the
// output it was becoming. One a live paes writes (a concurrent run over many
// files) is locked, and left alone; so is another user's.
void remove_stale_temporaries(const std::string& dir, const std::string& own) {
  static std::mutex listed_mutex;
  static std::set<std::string> listed;  // directories already looked at
  {
    const std::lock_guard lock(listed_mutex);
    if (!listed.insert(dir).second) return;
  }
  struct stat dir_st {};
  if (::stat(dir.empty() ? "." : dir.c_str(), &dir_st) != 0 || dir_st.st_size > kMostListedDirectoryBytes) return;
  DIR* listing = ::opendir(dir.empty() ? "." : dir.c_str());
  if (listing == nullptr) return;
  while (const dirent* entry = ::readdir(listing)) {
    const std::string name = entry->d_name;
    if (!is_output_temporary_name(name)) continue;
    const std::string path = dir + name;
    if (path == own) continue;
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) continue;
    struct stat st {};
    const bool stale = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
                       ::time(nullptr) - st.st_mtime > kStaleAfterSeconds && ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    if (stale && ::unlink(path.c_str()) == 0) {
      notify(NoticeLevel::note, "removed " + path + ", the temporary of a paes that ended before it could (" +
                                    std::to_string(st.st_size) + " bytes)");
    }
    ::close(fd);  // and the lock with it
  }
  ::closedir(listing);
}

}  // namespace

bool is_output_temporary_name(const std::string& name) {
  constexpr std::string_view kMark = ".paes-";
  const std::size_t mark = name.size() >= 8 + kMark.size() ? name.size() - 6 - kMark.size() : std::string::npos;
  if (!name.starts_with('.') || mark == std::string::npos || name.compare(mark, kMark.size(), kMark) != 0) return false;
  return std::all_of(name.end() - 6, name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
}

OutputFile::OutputFile(const std::string& path, const OutputOptions& options) : path_(path), options_(options) {
  if (path.empty()) throw usage_error("an output file needs a name");
  struct stat st {};
  const bool exists = ::lstat(path.c_str(), &st) == 0;
  if (exists) {
    if (existing_output_is_device(path, st, options.force)) {
      fd_ = open_device(path, st, options.force);
      try {
        refuse_writing_the_input(fd_, options.input_fd, path);
      } catch (...) {
        ::close(fd_);
        fd_ = -1;
        throw;
      }
      return;
    }
  } else if (errno != ENOENT) {
    throw system_error(path);
  }

  dir_ = directory_of(path);
  const std::size_t slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  // The temporary's name adds 13 characters to the target's: a name near the
  // file system's limit (NAME_MAX, 255) is cut short in it.
  constexpr std::size_t kLongestBase = 255 - 13;
  if (base.size() > kLongestBase) base.resize(kLongestBase);
  std::string temp = (slash == std::string::npos ? "" : dir_) + "." + base + ".paes-XXXXXX";
  // Close-on-exec from the start: another thread may start a plugin meanwhile.
  fd_ = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd_ < 0) {
    // A file the user may write in a directory they may not: the temporary
    // beside it is what fails, which the bare errno did not say.
    const int failed = errno;
    const Error error = system_error("cannot create the output in " + dir_ + " (" + base +
                                     " is written to a temporary beside it, then renamed over it)");
    const bool writable_in_place = exists && S_ISREG(st.st_mode) && ::access(path.c_str(), W_OK) == 0 &&
                                   (failed == EACCES || failed == EPERM || failed == EROFS);
    if (!writable_in_place) throw error;
    throw Error(error.what(), ErrorKind::failure, Remedy::write_in_place);
  }
  temp_path_ = temp;
  // Armed at once: a signal that ends paes (a set's Ctrl-C lands while
  // other files are starting) removes every temporary that exists by then.
  try {
    cleanup_slot_ = arm_cleanup(temp_path_);
  } catch (...) {
    discard();
    throw;
  }
  // Held while this process lives: what tells a later run that the
  // temporary is being written, not left behind.
  ::flock(fd_, LOCK_EX | LOCK_NB);
  remove_stale_temporaries(slash == std::string::npos ? "" : dir_, temp_path_);
}

OutputFile::~OutputFile() {
  if (!committed_) discard();
}

void OutputFile::discard() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_path_.empty()) {
    ::unlink(temp_path_.c_str());
    disarm_cleanup(cleanup_slot_);
    temp_path_.clear();
  }
}

namespace {

// Writes all of `src` at `offset` of `fd`; with `start_writeback`, starts
// writing these pages to disk now, while the cipher works on the next chunks,
// so that the final fsync waits only for the tail. That is a hint: its
// errors, if any, come back from the fsync.
void write_all_at(int fd, std::uint64_t offset, std::span<const std::uint8_t> src, bool start_writeback,
                  const std::string& path) {
  std::size_t done = 0;
  while (done < src.size()) {
    const ssize_t n = ::pwrite(fd, src.data() + done, src.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw system_error("writing " + path);
    }
    done += static_cast<std::size_t>(n);
  }
  if (start_writeback) {
    ::sync_file_range(fd, static_cast<off_t>(offset), static_cast<off_t>(src.size()), SYNC_FILE_RANGE_WRITE);
  }
}

}  // namespace

void OutputFile::write_at(std::uint64_t offset, std::span<const std::uint8_t> src) {
  write_all_at(fd_, offset, src, !temp_path_.empty(), path_);  // not on a device
}

SharedOutputFile::SharedOutputFile(const std::string& path) : path_(path) {
  // O_NOFOLLOW: rank 0 made this file; a link put in its place meanwhile is
  // not it.
  fd_ = ::open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd_ < 0) throw system_error("opening the output " + path);
  struct stat st {};
  const bool seen = ::fstat(fd_, &st) == 0;
  // /dev/null, named so, discards every rank's part (checking a sealed
  // file's integrity on a cluster), as it discards the threads engine's.
  const bool discard = seen && path == "/dev/null" && S_ISCHR(st.st_mode);
  if (!seen || !(S_ISREG(st.st_mode) || discard)) {
    const Error error = seen ? Error(path + ": not a regular file") : system_error("opening the output " + path);
    ::close(fd_);
    throw error;
  }
}

SharedOutputFile::~SharedOutputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void SharedOutputFile::write_at(std::uint64_t offset, std::span<const std::uint8_t> src) {
  write_all_at(fd_, offset, src, true, path_);
}

void SharedOutputFile::close() {
  const int fd = std::exchange(fd_, -1);
  int error = ::fdatasync(fd) == 0 || (errno == EINVAL && path_ == "/dev/null") ? 0 : errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    errno = error;
    throw system_error("writing " + path_);
  }
}

void OutputFile::commit() {
  if (committed_) throw Error(path_ + ": committed already");
  if (fd_ < 0) throw Error(path_ + ": discarded after a failed commit");
  if (temp_path_.empty()) {
    // A device: a block device is made durable like a file; a character
    // device (/dev/null) can't be synced (EINVAL), which is no failure.
    const int fd = std::exchange(fd_, -1);
    committed_ = true;
    int error = ::fsync(fd) == 0 || errno == EINVAL ? 0 : errno;
    if (::close(fd) != 0 && error == 0) error = errno;
    if (error != 0) {
      errno = error;
      throw system_error("writing " + path_);
    }
    return;
  }
  if (!set_final_attributes(fd_, path_, options_) || ::fsync(fd_) != 0) {
    const Error error = system_error("writing " + path_);
    discard();
    throw error;
  }
  // Renamed while still open, and so still locked: closed first, the
  // temporary lay unlocked for a moment, and with the old times a data set
  // gives it (its input's), another output's first look at the directory
  // took it for a killed paes's and removed it (remove_stale_temporaries).
  const int renamed = options_.force ? ::rename(temp_path_.c_str(), path_.c_str())
                                     : rename_noreplace(temp_path_.c_str(), path_.c_str());
  if (renamed != 0) {
    const Error error = errno == EEXIST ? exists_error(path_) : system_error(path_);
    discard();
    throw error;
  }
  disarm_cleanup(cleanup_slot_);
  temp_path_.clear();
  committed_ = true;
  if (::close(std::exchange(fd_, -1)) != 0) {
    throw system_error(path_ + " is in place, but closing it failed, so its data may not all be stored");
  }
  if (sync_directory(dir_) != 0) {
    throw system_error(path_ + " is complete, but syncing its directory failed, so a crash may undo the rename");
  }
}

}  // namespace paes
