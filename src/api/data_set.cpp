// Data sets (paes/data_set.hpp): listing the files, naming their outputs,
// and running them side by side.
#include "paes/data_set.hpp"

#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "api/recipients.hpp"
#include "paes/engine.hpp"
#include "paes/io.hpp"
#include "paes/notice.hpp"
#include "util/elapsed.hpp"

namespace paes {
namespace {

// What a signal handler can remove at once (OutputFile's table of
// temporaries, io/output_file.cpp): more files in flight would leave some
// temporaries behind on Ctrl-C.
constexpr unsigned kMostFilesInFlight = 64;
// Descriptors one file in flight may hold: its input, its temporary, the
// directory synced at its commit, an armor's or a plugin's pipes.
constexpr rlim_t kDescriptorsPerFile = 8;
// Descriptors kept for everything else: standard streams, key files, a GPU
// driver's, MPI's.
constexpr rlim_t kDescriptorsKept = 64;
// A file this large a thread runs alone on all of them (DataSetOptions).
constexpr std::uint64_t kWholeMachineBytesPerThread = std::uint64_t{4} << 20;

std::string joined(const std::string& dir, const std::string& name) {
  return dir.ends_with('/') ? dir + name : dir + "/" + name;
}

std::string describe_special(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link, which a tree's walk doesn't follow";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

class Lister {
 public:
  explicit Lister(const DataSetNaming& naming) : naming_(naming) {
    if (naming_.suffixes.empty() || naming_.suffixes.front().empty()) {
      throw usage_error("a data set's outputs need a suffix to tell them from their inputs");
    }
    struct stat st {};
    if (!naming_.output_dir.empty() && ::stat(naming_.output_dir.c_str(), &st) == 0) {
      output_dir_ = {st.st_dev, st.st_ino};
    }
  }

  void add_root(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      fail(path, system_error(path).what());
    } else if (S_ISDIR(st.st_mode)) {
      if (naming_.recursive) {
        walk(path);
      } else {
        fail(path, path + ": is a directory");
      }
    } else if (!S_ISREG(st.st_mode)) {
      fail(path, path + ": " + describe_special(st.st_mode) + ", not a regular file");
    } else {
      add_file(path, st, true);
    }
  }

  std::vector<DataSetFile> take() { return std::move(files_); }

 private:
  void fail(const std::string& path, std::string why) {
    files_.push_back(DataSetFile{path, "", 0, std::move(why)});
  }

  void walk(const std::string& dir) {
    std::vector<std::string> names;
    DIR* listing = ::opendir(dir.c_str());
    if (listing == nullptr) {
      fail(dir, system_error("cannot read the directory " + dir).what());
      return;
    }
    errno = 0;
    while (const dirent* entry = ::readdir(listing)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    const int read_error = errno;
    ::closedir(listing);
    if (read_error != 0) {
      errno = read_error;
      fail(dir, system_error("cannot read the directory " + dir).what());
    }
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      const std::string path = joined(dir, name);
      struct stat st {};
      if (::lstat(path.c_str(), &st) != 0) {
        fail(path, system_error(path).what());  // gone since it was listed
      } else if (S_ISDIR(st.st_mode)) {
        // The output directory inside a tree holds an earlier run's outputs,
        // not data: walked, a second run would nest them in it again.
        if (output_dir_ == std::pair{st.st_dev, st.st_ino}) {
          notify(NoticeLevel::note, "skipped " + path + ": the output directory");
        } else {
          walk(path);
        }
      } else if (S_ISREG(st.st_mode)) {
        // Another paes's output being written (or one killed's): not data.
        if (!is_output_temporary_name(name)) add_file(path, st, false);
      } else {
        notify(NoticeLevel::note, "skipped " + path + ": " + describe_special(st.st_mode));
      }
    }
  }

  // The suffix `name` ends in (and has more than), or null.
  const std::string* suffix_of(const std::string& path) const {
    const std::string name = path.substr(path.rfind('/') + 1);
    for (const std::string& suffix : naming_.suffixes) {
      if (name.size() > suffix.size() && name.ends_with(suffix)) return &suffix;
    }
    return nullptr;
  }

  void add_file(const std::string& path, const struct stat& st, bool named) {
    const std::string* suffix = suffix_of(path);
    std::string output;
    if (naming_.direction == Direction::encrypt) {
      if (suffix != nullptr && *suffix == naming_.suffixes.front()) {
        if (named) notify(NoticeLevel::note, "skipped " + path + ": it already ends in " + *suffix);
        return;
      }
      output = path + naming_.suffixes.front();
    } else {
      if (suffix == nullptr) {
        if (named) fail(path, path + ": its name doesn't end in " + naming_.suffixes.front() + ", so its output has no name");
        return;
      }
      output = path.substr(0, path.size() - suffix->size());
    }
    if (!naming_.output_dir.empty()) {
      const std::filesystem::path relative = std::filesystem::path(output).lexically_normal().relative_path();
      if (std::any_of(relative.begin(), relative.end(), [](const auto& part) { return part == ".."; })) {
        fail(path, path + ": its path climbs with '..', so it has no place under " + naming_.output_dir);
        return;
      }
      output = joined(naming_.output_dir, relative.string());
    }
    // Once, under the first name that gives it an output.
    if (!seen_.insert({st.st_dev, st.st_ino}).second) return;
    // Two inputs of one output (x.paes and x.age, decrypting): the second
    // fails, or with force it would replace the first's (and under removal
    // both inputs would go, one of them lost).
    if (const auto [taken, fresh] = outputs_.try_emplace(output, path); !fresh) {
      fail(path, path + ": its output " + output + " is already " + taken->second + "'s");
      return;
    }
    files_.push_back(DataSetFile{path, std::move(output), static_cast<std::uint64_t>(st.st_size), ""});
  }

  const DataSetNaming& naming_;
  std::vector<DataSetFile> files_;
  std::set<std::pair<dev_t, ino_t>> seen_;
  std::map<std::string, std::string> outputs_;  // output -> the input that names it
  std::optional<std::pair<dev_t, ino_t>> output_dir_;  // where it exists when listing starts
};

// How many files run side by side: the threads, within the descriptors and
// the signal handler's table.
unsigned files_in_flight(unsigned threads, std::size_t files) {
  rlim_t by_descriptors = kMostFilesInFlight;
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    by_descriptors = limit.rlim_cur > kDescriptorsKept + kDescriptorsPerFile
                         ? (limit.rlim_cur - kDescriptorsKept) / kDescriptorsPerFile
                         : 1;
  }
  const auto most = std::min<std::uint64_t>({threads, kMostFilesInFlight, by_descriptors, files});
  return static_cast<unsigned>(std::max<std::uint64_t>(most, 1));
}

class SetRun {
 public:
  SetRun(const FileJob& job, const DataSetOptions& options) : job_(job), options_(options) {}

  // Runs `file` with `threads` threads, and reports it.
  void run(const DataSetFile& file, unsigned threads) {
    DataSetOutcome outcome;
    outcome.file = &file;
    try {
      if (!file.error.empty()) throw Error(file.error);
      struct stat before {};
      if (options_.remove_inputs) before = check_removable(file.input);
      if (const std::filesystem::path parent = std::filesystem::path(file.output).parent_path(); !parent.empty()) {
        std::error_code error;
        std::filesystem::create_directories(parent, error);
        if (error) throw Error("cannot make the directory " + parent.string() + ": " + error.message());
      }
      TransformOptions options = options_.transform;
      options.threads = threads;
      outcome.report = job_(file.input, file.output, options);
      if (options_.remove_inputs) outcome.input_removed = remove_input(file.input, before);
    } catch (const Error& e) {
      outcome.error = e;
      outcome.cause = std::current_exception();
    } catch (const std::bad_alloc&) {
      outcome.error = Error("out of memory");
    } catch (const std::exception& e) {
      outcome.error = Error(e.what());
    }
    const std::lock_guard lock(mutex_);
    if (outcome.report) {
      ++report_.done;
      report_.bytes_in += outcome.report->bytes_in;
      report_.bytes_out += outcome.report->bytes_out;
    } else {
      ++report_.failed;
    }
    if (options_.on_file) options_.on_file(outcome);
  }

  DataSetReport& report() { return report_; }

 private:
  // The input's stat, once it is known that removing it removes its data.
  struct stat check_removable(const std::string& path) const {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) throw system_error(path);
    if (S_ISLNK(st.st_mode)) {
      throw Error(path + ": a symbolic link: removing it would keep the data it points to");
    }
    if (st.st_nlink > 1 && !options_.transform.force) {
      throw Error(path + ": has " + std::to_string(st.st_nlink - 1) +
                  " other hard link(s), under which its data would outlive its removal: left alone unless forced");
    }
    return st;
  }

  // Removes the input the job read, unless its name was given to another
  // file meanwhile (a log rotated): that one is no input of this run.
  static bool remove_input(const std::string& path, const struct stat& before) {
    struct stat now {};
    if (::lstat(path.c_str(), &now) != 0 || now.st_dev != before.st_dev || now.st_ino != before.st_ino) {
      notify(NoticeLevel::warning, "kept " + path + ": another file took its name while it was read");
      return false;
    }
    if (::unlink(path.c_str()) != 0) {
      notify(NoticeLevel::warning, "kept " + path + ": " + system_error("removing it").what());
      return false;
    }
    return true;
  }

  const FileJob& job_;
  const DataSetOptions& options_;
  std::mutex mutex_;
  DataSetReport report_;
};

}  // namespace

std::vector<DataSetFile> list_data_set(const std::vector<std::string>& roots, const DataSetNaming& naming) {
  Lister lister(naming);
  for (const std::string& root : roots) lister.add_root(root);
  return lister.take();
}

DataSetReport run_data_set(std::span<const DataSetFile> files, const FileJob& job, const DataSetOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const unsigned threads = options.transform.threads != 0 ? options.transform.threads : online_cpus();
  const std::uint64_t whole_machine =
      options.whole_machine_from != 0 ? options.whole_machine_from : threads * kWholeMachineBytesPerThread;
  std::vector<const DataSetFile*> small;
  std::vector<const DataSetFile*> large;
  for (const DataSetFile& file : files) {
    (file.error.empty() && file.size >= whole_machine && threads > 1 ? large : small).push_back(&file);
  }
  SetRun set(job, options);
  // Small files side by side, one thread each: a queue the workers draw from.
  const unsigned in_flight = files_in_flight(threads, small.size());
  std::atomic<std::size_t> next{0};
  const auto drain = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < small.size();) set.run(*small[i], 1);
  };
  std::vector<std::jthread> workers;
  for (unsigned w = 1; w < in_flight; ++w) workers.emplace_back(drain);
  drain();
  workers.clear();  // joins
  // Then each large one alone, on every thread: each is already at the
  // machine's speed, and runs in the memory of one job.
  for (const DataSetFile* file : large) set.run(*file, threads);
  DataSetReport report = set.report();
  report.parallel_files = large.empty() || in_flight > 1 ? in_flight : 1;
  report.seconds = seconds_since(start);
  return report;
}

DataSetReport run_sealed_data_set(const SealedSpec& spec, std::span<const DataSetFile> files,
                                  const DataSetOptions& options) {
  const auto run = [&files, &options](const SealedSpec& each) {
    return run_data_set(
        files,
        [&each](const std::string& input, const std::string& output, const TransformOptions& file_options) {
          return run_sealed(each, input, output, file_options);
        },
        options);
  };
  const auto is_plugin = [](const auto& key) { return key.type() == KeyType::plugin; };
  const bool plugins_open = spec.direction == Direction::decrypt &&
                            std::any_of(spec.identities.begin(), spec.identities.end(), is_plugin);
  const bool plugins_wrap = spec.direction == Direction::encrypt &&
                            std::any_of(spec.recipients.begin(), spec.recipients.end(), is_plugin);
  std::vector<std::string> paths;
  for (const DataSetFile& file : files) {
    if (file.error.empty()) paths.push_back(file.input);
  }
  if (spec.plugin_batch || (!plugins_open && !plugins_wrap) || paths.size() < 2) return run(spec);
  // Each plugin's session for every file at once (a hardware key touched
  // once a set), before the files run side by side.
  SealedSpec with_batch = spec.clone();
  if (plugins_open) {
    with_batch.plugin_batch = PluginBatch::open_ahead(spec.identities, paths, spec.ui);
  } else {
    try {
      with_batch.plugin_batch = PluginBatch::wrap_ahead(spec.recipients, paths.size(), spec.ui);
    } catch (const Error&) {
      // Each file's own session fails, and says why, for that file.
    }
  }
  return run(with_batch);
}

}  // namespace paes
