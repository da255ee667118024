// Data sets: many files in one call, as gzip and zstd take them. A set is
// listed first (named files, and the trees under named directories), each
// file given its output's name; then the files run side by side, a queue of
// them across the workers, and each one's failure is its own: the others go
// on. One file's job is any of the front doors (run_sealed, transform_file,
// transform_salted) bound to its spec, so each file gets what one call gives
// it: a sealed file its own file key, salt and recipients' shares.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "paes/error.hpp"
#include "paes/mode.hpp"
#include "paes/sealed.hpp"
#include "paes/transform.hpp"

namespace paes {

// How a set is listed and its outputs named.
struct DataSetNaming {
  Direction direction = Direction::encrypt;
  // Encrypting: the first is added to each input's name, and an input that
  // already ends in it is skipped (a named one with a note). Decrypting: the
  // first of them an input's name ends in is removed to name its output; a
  // named input that ends in none fails, one in a tree is skipped.
  std::vector<std::string> suffixes{".paes"};
  // Empty: each output beside its input. Otherwise under this directory, at
  // the input's path as it was named (a leading '/' dropped), directories
  // made as needed; a path that climbs with ".." can't be mirrored there and
  // fails.
  std::string output_dir;
  // Named directories are walked: their regular files are taken; symbolic
  // links in them are not followed, and they, FIFOs, devices and sockets are
  // skipped with a note (a named link is followed), as is the output
  // directory where a tree holds it. Without it a named directory fails.
  bool recursive = false;
};

// One file of a set, as listed.
struct DataSetFile {
  std::string input;
  std::string output;
  std::uint64_t size = 0;  // when listed
  // Why it can't be done (missing, not a regular file, an unreadable
  // directory, a name without the suffix...): listed so that it is reported
  // as failed, not dropped. Empty for a file to run.
  std::string error;
};

// Lists the files named by `roots` (files, and directories to walk) in the
// order named, each directory's entries sorted by name. The same file named
// twice (its device and inode) is listed once; a second input whose output
// is another's (x.paes and x.age, decrypting) fails. Throws only for what fails the
// whole set; each file's own trouble is its `error`.
std::vector<DataSetFile> list_data_set(const std::vector<std::string>& roots, const DataSetNaming& naming);

// What became of one file.
struct DataSetOutcome {
  const DataSetFile* file = nullptr;
  std::optional<TransformReport> report;  // done: its output is complete and durable
  std::optional<Error> error;             // failed: nothing is under its output's name
  std::exception_ptr cause;               // the failure as thrown, for its type (a ForeignFormatError)
  bool input_removed = false;             // DataSetOptions::remove_inputs did so
};

struct DataSetOptions {
  // Each file's options. `threads` are the set's: small files run side by
  // side on one thread each, and a file of `whole_machine_from` bytes or
  // more runs alone on all of them. `progress` hears of the set's bytes.
  TransformOptions transform;
  std::uint64_t whole_machine_from = 0;  // 0: 4 MiB a thread
  // Removes each input once its output is complete, durable (fsynced, then
  // its directory) and, decrypting, verified. An input with other hard links
  // fails instead (its data would live on under them), unless
  // transform.force; one whose name was given to another file meanwhile is
  // kept, with a warning.
  bool remove_inputs = false;
  // Called once for each file, failed ones included, from the worker that
  // ran it, one call at a time. It must not throw.
  std::function<void(const DataSetOutcome&)> on_file;
};

struct DataSetReport {
  std::size_t done = 0;
  std::size_t failed = 0;
  std::uint64_t bytes_in = 0;
  std::uint64_t bytes_out = 0;
  unsigned parallel_files = 0;  // the most files run side by side
  double seconds = 0;
};

// One file's job, from `input` into `output` with `options`.
using FileJob =
    std::function<TransformReport(const std::string& input, const std::string& output, const TransformOptions& options)>;

// Runs `job` on each file of `files` that has no error (those are reported
// failed at once), side by side. Files run at most as many at once as
// threads, the open files' limit (RLIMIT_NOFILE) and the temporaries a
// signal handler can remove (remove_pending_output) allow.
DataSetReport run_data_set(std::span<const DataSetFile> files, const FileJob& job, const DataSetOptions& options);

// run_data_set with run_sealed: a fresh file key, salt, and recipients'
// shares for each file. A passphrase costs one scrypt a file (scrypts side
// by side share half the machine's memory, and wait for it).
DataSetReport run_sealed_data_set(const SealedSpec& spec, std::span<const DataSetFile> files,
                                  const DataSetOptions& options);

}  // namespace paes
