// The descriptors paes was started with. A path such as /dev/fd/5 names
// whatever descriptor 5 is when it is opened; by then paes may hold
// descriptors of its own there (the input, a pipe's eventfd, a GPU driver's
// nodes), and writing the output into one of those is no thing the caller
// asked for. Outputs and inputs named by a descriptor are checked against
// this list.
#pragma once

#include <string>

namespace paes::cli {

// Notes which descriptors above 2 are open now: call first thing in main(),
// with its arguments. Only a command line with a path naming a descriptor
// (/dev/fd/N, /proc/self/fd/N, in any argument) needs the list; without one,
// the listing of /proc/self/fd (40 us, 1.5% of a small job) is skipped.
void remember_inherited_descriptors(int argc, const char* const* argv);

// Refuses (a usage Error) a path naming a descriptor above 2 that paes was
// not started with; `what` is the option's name for the message.
void refuse_own_descriptor(const std::string& path, const char* what);

// Writes out what paes printed on standard output (a summary, info, a
// recipient) and throws an Error when some of it could not be written (a
// full disk, stdout closed): stdio would lose it silently when paes exits.
void flush_standard_output();

}  // namespace paes::cli
