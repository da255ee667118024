// The fuzz input as a file: one memfd per target, rewritten for every input,
// so that the target reads it as paes decrypt reads a file (pread at offsets).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace paes::fuzz {

// The memfd (made on the first call, named `name`), holding `size` bytes of
// `data`; its path for run_sealed.
inline std::string memfd_input(const char* name, const std::uint8_t* data, std::size_t size) {
  static const int fd = [name] {
    const int created = memfd_create(name, 0);
    if (created < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    return created;
  }();
  if (ftruncate(fd, 0) != 0 || (size != 0 && pwrite(fd, data, size, 0) != static_cast<ssize_t>(size))) {
    std::perror("memfd write");
    std::abort();
  }
  return "/proc/self/fd/" + std::to_string(fd);
}

}  // namespace paes::fuzz
