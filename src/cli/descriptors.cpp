#include "cli/descriptors.hpp"

#include <dirent.h>
#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string>

#include "paes/endpoint.hpp"
#include "paes/error.hpp"

namespace paes::cli {
namespace {

std::set<int>& inherited() {
  static std::set<int> fds;
  return fds;
}
bool g_known = false;  // whether the list was taken: without it (no argument names a descriptor) nothing is refused

}  // namespace

void remember_inherited_descriptors(int argc, const char* const* argv) {
  // refuse_own_descriptor() checks the input and -o, which come from the
  // command line as they are (descriptor_named: these two prefixes).
  const bool names_descriptor = std::any_of(argv + 1, argv + argc, [](const char* arg) {
    return std::strstr(arg, "/dev/fd/") != nullptr || std::strstr(arg, "/proc/self/fd/") != nullptr;
  });
  if (!names_descriptor) return;
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    const int own = ::dirfd(dir);
    while (const dirent* entry = ::readdir(dir)) {
      char* end = nullptr;
      const long fd = std::strtol(entry->d_name, &end, 10);
      if (end != entry->d_name && *end == '\0' && fd > 2 && fd != own) inherited().insert(static_cast<int>(fd));
    }
    ::closedir(dir);
  } else {
    // No /proc: ask each descriptor a launcher is likely to hand down.
    for (int fd = 3; fd < 1024; ++fd) {
      if (::fcntl(fd, F_GETFD) != -1) inherited().insert(fd);
    }
  }
  // A launcher's own channel (MPICH's PMI socket), handed to each rank, is no
  // descriptor the user meant: ciphertext written there killed the launcher.
  if (const char* pmi = std::getenv("PMI_FD")) inherited().erase(std::atoi(pmi));
  g_known = true;
}

void refuse_own_descriptor(const std::string& path, const char* what) {
  const std::optional<int> fd = descriptor_named(path);
  if (!g_known || !fd || *fd <= 2 || inherited().count(*fd) != 0) return;
  throw usage_error(std::string(what) + " " + path + ": descriptor " + std::to_string(*fd) +
                    " was not open when paes started (paes' own descriptors are no input or output)");
}

void flush_standard_output() {
  errno = 0;
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return;
  // fflush's errno; none when an earlier write failed and this one had
  // nothing left to write (stdio drops a buffer it could not write).
  const int error = errno;
  throw Error(std::string("writing to standard output: ") + (error != 0 ? std::strerror(error) : "part of it was lost"));
}

}  // namespace paes::cli
