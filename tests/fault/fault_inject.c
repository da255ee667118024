/* An LD_PRELOAD shim that makes paes' reads, writes and fsyncs fail, or pause,
 * at a chosen byte offset, so test_faults.py can drive the real binary into
 * I/O errors a healthy disk never gives. Everything is chosen by environment
 * variables read once at load; with none set, every call passes through.
 *
 * Reads: the input is the file at PAES_FAULT_READ_PATH (matched by device and
 * inode, so it still matches after the test unlinks it) or the descriptor
 * PAES_FAULT_READ_FD (0 for stdin).
 *   PAES_FAULT_READ_AT=N      a read reaching byte N gets the bytes before N,
 *                             then fails with PAES_FAULT_READ_ERRNO (default
 *                             EIO) for any read at or past N.
 *   PAES_FAULT_PAUSE_AT=N     the first read reaching byte N creates the file
 *   PAES_FAULT_PAUSE_FILE=F   F and waits until the test removes it, so the
 *                             test can truncate, grow, unlink the input or send
 *                             a signal while paes is certainly mid-run.
 *   PAES_FAULT_PAUSE_OPEN=N   the Nth open(2) of the name PAES_FAULT_READ_PATH
 *                             (as spelled) pauses so, once it has opened: the
 *                             test can give the name another file between paes'
 *                             open and what paes does next.
 * Writes: the output is any regular file in the directory
 * PAES_FAULT_WRITE_DIR (paes' temporary has a random name), or the descriptor
 * PAES_FAULT_WRITE_FD (1 for stdout).
 *   PAES_FAULT_WRITE_AT=N     as for reads, with PAES_FAULT_WRITE_ERRNO
 *                             (default ENOSPC).
 *   PAES_FAULT_FSYNC_ERRNO=E  fsync/fdatasync of an output file fail with E:
 *                             a write error the kernel reports only at fsync.
 *
 * A positioned call (pread, pwrite) uses its offset; a plain read or write on
 * a seekable descriptor uses the file position, on a pipe the bytes that went
 * through it so far. */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE /* its inline read() and pread() would clash with the wrappers */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define NO_OFFSET (-1LL)
#define MAX_TRACKED_FD 1024

typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);
typedef ssize_t (*readv_fn)(int, const struct iovec *, int);
typedef ssize_t (*preadv_fn)(int, const struct iovec *, int, off_t);
typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*writev_fn)(int, const struct iovec *, int);
typedef ssize_t (*pwritev_fn)(int, const struct iovec *, int, off_t);
typedef int (*fsync_fn)(int);
typedef int (*open_fn)(const char *, int, ...);

static struct {
  read_fn read;
  pread_fn pread;
  pread_fn pread64;
  readv_fn readv;
  preadv_fn preadv;
  preadv_fn preadv64;
  write_fn write;
  pwrite_fn pwrite;
  pwrite_fn pwrite64;
  writev_fn writev;
  pwritev_fn pwritev;
  pwritev_fn pwritev64;
  fsync_fn fsync;
  fsync_fn fdatasync;
  open_fn open;
} real;

static struct {
  int have_read_file;
  dev_t read_dev;
  ino_t read_ino;
  int read_fd;            /* -1: none */
  long long read_at;      /* -1: none */
  int read_errno;
  long long pause_at;     /* -1: none */
  long long pause_open;   /* -1: none */
  char read_path[PATH_MAX];
  char pause_file[PATH_MAX];
  char write_dir[PATH_MAX];
  int write_fd;           /* -1: none */
  long long write_at;     /* -1: none */
  int write_errno;
  int fsync_errno;        /* 0: none */
} cfg;

static atomic_int loaded;
static atomic_int paused_once;
static atomic_llong input_opens;
/* Bytes that went through each non-seekable descriptor (pipes). */
static _Atomic long long stream_pos[MAX_TRACKED_FD];

static long long env_number(const char *name, long long fallback) {
  const char *text = getenv(name);
  if (!text || !*text) return fallback;
  return strtoll(text, NULL, 0);
}

static void *next_symbol(const char *name) {
  void *sym = dlsym(RTLD_NEXT, name);
  if (!sym) {
    static const char msg[] = "fault_inject: a libc symbol is missing\n";
    (void)!syscall(SYS_write, 2, msg, sizeof msg - 1);
    abort();
  }
  return sym;
}

/* ISO C has no cast from dlsym's object pointer to a function pointer; POSIX
 * guarantees the representations match, so copy the bytes. */
#define RESOLVE(name)                      \
  do {                                     \
    void *sym = next_symbol(#name);        \
    memcpy(&real.name, &sym, sizeof sym);  \
  } while (0)

/* Runs at load, or earlier when another library's constructor does I/O first
 * (both happen before paes starts threads). */
__attribute__((constructor)) static void load_config(void) {
  if (atomic_load(&loaded)) return;
  RESOLVE(read);
  RESOLVE(pread);
  RESOLVE(pread64);
  RESOLVE(readv);
  RESOLVE(preadv);
  RESOLVE(preadv64);
  RESOLVE(write);
  RESOLVE(pwrite);
  RESOLVE(pwrite64);
  RESOLVE(writev);
  RESOLVE(pwritev);
  RESOLVE(pwritev64);
  RESOLVE(fsync);
  RESOLVE(fdatasync);
  RESOLVE(open);

  const char *read_path = getenv("PAES_FAULT_READ_PATH");
  struct stat st;
  if (read_path) snprintf(cfg.read_path, sizeof cfg.read_path, "%s", read_path);
  if (read_path && stat(read_path, &st) == 0) {
    cfg.have_read_file = 1;
    cfg.read_dev = st.st_dev;
    cfg.read_ino = st.st_ino;
  }
  cfg.read_fd = (int)env_number("PAES_FAULT_READ_FD", -1);
  cfg.read_at = env_number("PAES_FAULT_READ_AT", -1);
  cfg.read_errno = (int)env_number("PAES_FAULT_READ_ERRNO", EIO);
  cfg.pause_at = env_number("PAES_FAULT_PAUSE_AT", -1);
  const char *pause_file = getenv("PAES_FAULT_PAUSE_FILE");
  if (pause_file) snprintf(cfg.pause_file, sizeof cfg.pause_file, "%s", pause_file);
  cfg.pause_open = env_number("PAES_FAULT_PAUSE_OPEN", -1);
  if (!cfg.pause_file[0]) cfg.pause_at = cfg.pause_open = -1;
  const char *write_dir = getenv("PAES_FAULT_WRITE_DIR");
  if (write_dir) snprintf(cfg.write_dir, sizeof cfg.write_dir, "%s/", write_dir);
  cfg.write_fd = (int)env_number("PAES_FAULT_WRITE_FD", -1);
  cfg.write_at = env_number("PAES_FAULT_WRITE_AT", -1);
  cfg.write_errno = (int)env_number("PAES_FAULT_WRITE_ERRNO", ENOSPC);
  cfg.fsync_errno = (int)env_number("PAES_FAULT_FSYNC_ERRNO", 0);
  atomic_store(&loaded, 1);
}

static int is_input(int fd) {
  if (fd < 0) return 0;
  if (fd == cfg.read_fd) return 1;
  if (!cfg.have_read_file) return 0;
  struct stat st;
  return fstat(fd, &st) == 0 && st.st_dev == cfg.read_dev && st.st_ino == cfg.read_ino;
}

static int is_output(int fd) {
  if (fd < 0) return 0;
  if (fd == cfg.write_fd) return 1;
  if (!cfg.write_dir[0]) return 0;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  char link[64], target[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return 0;
  target[n] = '\0';
  const size_t dir_len = strlen(cfg.write_dir);
  return strncmp(target, cfg.write_dir, dir_len) == 0 && strchr(target + dir_len, '/') == NULL;
}

/* Where a plain read or write on `fd` starts. */
static long long current_offset(int fd) {
  const off_t pos = lseek(fd, 0, SEEK_CUR);
  if (pos >= 0) return (long long)pos;
  return fd < MAX_TRACKED_FD ? stream_pos[fd] : 0;
}

static void count_stream_bytes(int fd, ssize_t n) {
  if (n > 0 && fd < MAX_TRACKED_FD && lseek(fd, 0, SEEK_CUR) < 0) stream_pos[fd] += n;
}

static void pause_until_removed(void) {
  const int fd = open(cfg.pause_file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) close(fd);
  const struct timespec tick = {0, 5 * 1000 * 1000};
  while (access(cfg.pause_file, F_OK) == 0) nanosleep(&tick, NULL);
}

static void pause_if_reached(long long offset, size_t len) {
  if (cfg.pause_at < 0 || offset + (long long)len <= cfg.pause_at) return;
  if (atomic_exchange(&paused_once, 1)) return;
  pause_until_removed();
}

/* How many of `len` bytes at `offset` may go through before the fault at
 * `fault_at`; -1 (errno set) when none may. */
static ssize_t allowed_len(long long offset, size_t len, long long fault_at, int error) {
  if (fault_at < 0 || offset + (long long)len <= fault_at) return (ssize_t)len;
  if (offset >= fault_at) {
    errno = error;
    return -1;
  }
  return (ssize_t)(fault_at - offset);
}

static size_t iov_total(const struct iovec *iov, int count) {
  size_t total = 0;
  for (int i = 0; i < count; ++i) total += iov[i].iov_len;
  return total;
}

/* The first `len` bytes of a vector call, done as a single plain call, which
 * is enough to give paes the short transfer that precedes the fault. */
static ssize_t first_part_read(int fd, const struct iovec *iov, size_t len, long long offset) {
  if (len > iov[0].iov_len) len = iov[0].iov_len;
  return offset == NO_OFFSET ? real.read(fd, iov[0].iov_base, len)
                             : real.pread(fd, iov[0].iov_base, len, (off_t)offset);
}

static ssize_t first_part_write(int fd, const struct iovec *iov, size_t len, long long offset) {
  if (len > iov[0].iov_len) len = iov[0].iov_len;
  return offset == NO_OFFSET ? real.write(fd, iov[0].iov_base, len)
                             : real.pwrite(fd, iov[0].iov_base, len, (off_t)offset);
}

/* Applies the read faults to a call of `len` bytes at `offset`; returns the
 * length to pass on, or -1 with errno set. */
static ssize_t read_gate(int fd, long long offset, size_t len) {
  load_config();
  if (!is_input(fd)) return (ssize_t)len;
  if (offset == NO_OFFSET) offset = current_offset(fd);
  pause_if_reached(offset, len);
  return allowed_len(offset, len, cfg.read_at, cfg.read_errno);
}

static ssize_t write_gate(int fd, long long offset, size_t len) {
  load_config();
  if (!is_output(fd)) return (ssize_t)len;
  if (offset == NO_OFFSET) offset = current_offset(fd);
  return allowed_len(offset, len, cfg.write_at, cfg.write_errno);
}

ssize_t read(int fd, void *buf, size_t len) {
  const ssize_t allowed = read_gate(fd, NO_OFFSET, len);
  if (allowed < 0) return -1;
  const ssize_t n = real.read(fd, buf, (size_t)allowed);
  count_stream_bytes(fd, n);
  return n;
}

/* The positioned calls, each also under its 64-bit name: `call` is the
 * real one's slot, read once the gate has resolved it (load_config). */
static ssize_t gated_pread(pread_fn *call, int fd, void *buf, size_t len, off_t offset) {
  const ssize_t allowed = read_gate(fd, offset, len);
  return allowed < 0 ? -1 : (*call)(fd, buf, (size_t)allowed, offset);
}

static ssize_t gated_preadv(preadv_fn *call, int fd, const struct iovec *iov, int count, off_t offset) {
  const size_t len = iov_total(iov, count);
  const ssize_t allowed = read_gate(fd, offset, len);
  if (allowed < 0) return -1;
  return (size_t)allowed == len ? (*call)(fd, iov, count, offset) : first_part_read(fd, iov, (size_t)allowed, offset);
}

static ssize_t gated_pwrite(pwrite_fn *call, int fd, const void *buf, size_t len, off_t offset) {
  const ssize_t allowed = write_gate(fd, offset, len);
  return allowed < 0 ? -1 : (*call)(fd, buf, (size_t)allowed, offset);
}

static ssize_t gated_pwritev(pwritev_fn *call, int fd, const struct iovec *iov, int count, off_t offset) {
  const size_t len = iov_total(iov, count);
  const ssize_t allowed = write_gate(fd, offset, len);
  if (allowed < 0) return -1;
  return (size_t)allowed == len ? (*call)(fd, iov, count, offset) : first_part_write(fd, iov, (size_t)allowed, offset);
}

ssize_t pread(int fd, void *buf, size_t len, off_t offset) { return gated_pread(&real.pread, fd, buf, len, offset); }

ssize_t pread64(int fd, void *buf, size_t len, off_t offset) {
  return gated_pread(&real.pread64, fd, buf, len, offset);
}

ssize_t readv(int fd, const struct iovec *iov, int count) {
  const size_t len = iov_total(iov, count);
  const ssize_t allowed = read_gate(fd, NO_OFFSET, len);
  if (allowed < 0) return -1;
  const ssize_t n = (size_t)allowed == len ? real.readv(fd, iov, count)
                                           : first_part_read(fd, iov, (size_t)allowed, NO_OFFSET);
  count_stream_bytes(fd, n);
  return n;
}

ssize_t preadv(int fd, const struct iovec *iov, int count, off_t offset) {
  return gated_preadv(&real.preadv, fd, iov, count, offset);
}

ssize_t preadv64(int fd, const struct iovec *iov, int count, off_t offset) {
  return gated_preadv(&real.preadv64, fd, iov, count, offset);
}

ssize_t write(int fd, const void *buf, size_t len) {
  const ssize_t allowed = write_gate(fd, NO_OFFSET, len);
  if (allowed < 0) return -1;
  const ssize_t n = real.write(fd, buf, (size_t)allowed);
  count_stream_bytes(fd, n);
  return n;
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t offset) {
  return gated_pwrite(&real.pwrite, fd, buf, len, offset);
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off_t offset) {
  return gated_pwrite(&real.pwrite64, fd, buf, len, offset);
}

ssize_t writev(int fd, const struct iovec *iov, int count) {
  const size_t len = iov_total(iov, count);
  const ssize_t allowed = write_gate(fd, NO_OFFSET, len);
  if (allowed < 0) return -1;
  const ssize_t n = (size_t)allowed == len ? real.writev(fd, iov, count)
                                           : first_part_write(fd, iov, (size_t)allowed, NO_OFFSET);
  count_stream_bytes(fd, n);
  return n;
}

ssize_t pwritev(int fd, const struct iovec *iov, int count, off_t offset) {
  return gated_pwritev(&real.pwritev, fd, iov, count, offset);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int count, off_t offset) {
  return gated_pwritev(&real.pwritev64, fd, iov, count, offset);
}

/* paes opens with open(2) (not openat, nor open64 on this LP64 target). */
int open(const char *path, int flags, ...) {
  load_config();
  mode_t mode = 0;
  if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
    va_list args;
    va_start(args, flags);
    mode = va_arg(args, mode_t);
    va_end(args);
  }
  const int fd = real.open(path, flags, mode);
  if (fd >= 0 && cfg.pause_open > 0 && strcmp(path, cfg.read_path) == 0 &&
      atomic_fetch_add(&input_opens, 1) + 1 == cfg.pause_open) {
    pause_until_removed();
  }
  return fd;
}

int fsync(int fd) {
  load_config();
  if (cfg.fsync_errno != 0 && is_output(fd)) {
    errno = cfg.fsync_errno;
    return -1;
  }
  return real.fsync(fd);
}

int fdatasync(int fd) {
  load_config();
  if (cfg.fsync_errno != 0 && is_output(fd)) {
    errno = cfg.fsync_errno;
    return -1;
  }
  return real.fdatasync(fd);
}
