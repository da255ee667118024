#include "cli/say.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace paes::cli {

void say(std::string_view text) noexcept {
  std::fflush(stdout);
  while (!text.empty()) {
    const ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace paes::cli
