// A write past the file size limit (RLIMIT_FSIZE, `ulimit -f`) raises SIGXFSZ,
// whose default action kills the process without a word and leaves the
// temporary output behind. Ignored, the write fails with EFBIG instead, and
// paes reports "File too large" and cleans up like after any write error.
#pragma once

#include <csignal>

namespace paes {

inline void ignore_file_size_signal() {
  static const bool ignored = [] { return std::signal(SIGXFSZ, SIG_IGN) != SIG_ERR; }();
  (void)ignored;
}

}  // namespace paes
