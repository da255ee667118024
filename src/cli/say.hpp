// paes' own lines on stderr (errors, warnings, notes, summaries), each
// message written whole, in one write(2).
//
// Why not std::cerr <<: std::cerr is unbuffered, so every << is a write of its
// own, and a line built with << can be cut by another thread's line or, under
// mpiexec (which merges every rank's stderr), by another rank's: Open MPI gave
// "paes: paes: the launcher started …" with one rank's "paes: " before the
// other's whole line. A write to a pipe of at most PIPE_BUF bytes is never
// split, so a message built first and written once stays one line.
#pragma once

#include <string>
#include <string_view>

#include "paes/error.hpp"

namespace paes::cli {

// Writes `text` (whole lines, each ending in '\n') to stderr in one write,
// retried only for what a short write or a signal left. stdout is flushed
// first, so that on a shared terminal the message follows what paes printed
// before it. A closed or full stderr loses the message, as it would any other.
void say(std::string_view text) noexcept;

// The options that cure an error the library names in its own terms
// (Remedy): " (use -f to overwrite)" and the like; "" for none.
std::string in_flags(Remedy remedy);

}  // namespace paes::cli
