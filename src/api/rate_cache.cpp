#include "api/rate_cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "paes/backend.hpp"

namespace paes {

std::filesystem::path RateCache::default_path() {
  if (const char* dir = std::getenv("PAES_CACHE_DIR"); dir != nullptr && *dir != '\0') {
    return std::filesystem::path(dir) / "auto-rates";
  }
  // The XDG base directory rules: a relative path is invalid, and ignored
  // (it would put the cache wherever paes happens to run).
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/') {
    return std::filesystem::path(xdg) / "paes" / "auto-rates";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::filesystem::path(home) / ".cache" / "paes" / "auto-rates";
  }
  return {};
}

namespace {

// One line's fields after the key, or nothing when they don't parse or make
// no sense (a GPU must have positive rates, "none" zero ones).
std::optional<MeasuredRates> parse_rates(std::istringstream& fields) {
  std::string engine;
  MeasuredRates rates;
  if (!std::getline(fields, engine, '\t') ||
      !(fields >> rates.gpu_bytes_per_s >> rates.cpu_bytes_per_s >> rates.gpu_start_seconds) ||
      fields.get() != '\t' || rates.gpu_start_seconds < 0) {
    return std::nullopt;
  }
  std::getline(fields, rates.device);
  if (engine == "none") return rates.gpu_bytes_per_s == 0 && rates.cpu_bytes_per_s == 0 ? std::optional(rates)
                                                                                         : std::nullopt;
  // By name, whether or not this build has the backend: the key holds the
  // GPU stack, so a line of a build without it is never looked up.
  if (!(rates.gpu_bytes_per_s > 0) || !(rates.cpu_bytes_per_s > 0)) return std::nullopt;
  for (const CipherBackendName& row : cipher_backend_names()) {
    if (row.gpu && row.name == engine) {
      rates.gpu = engine;
      return rates;
    }
  }
  return std::nullopt;
}

// Tabs and newlines in a key or a name would break the file's lines.
std::string one_field(std::string text) {
  for (char& c : text) {
    if (c == '\t' || c == '\n') c = ' ';
  }
  return text;
}

// The entries of the cache file at `path` (none where it can't be read).
std::map<std::string, MeasuredRates> read_entries(const std::filesystem::path& path) {
  std::map<std::string, MeasuredRates> entries;
  if (path.empty()) return entries;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    if (!std::getline(fields, key, '\t') || key.empty()) continue;
    if (std::optional<MeasuredRates> rates = parse_rates(fields)) entries[key] = std::move(*rates);
  }
  return entries;
}

// An exclusive lock on the cache, held while it lives (flock on a file
// beside the cache: the cache itself is replaced by rename).
class CacheLock {
 public:
  // Read-only is enough to lock: another user's lock file in a shared cache
  // directory still serves. A file system without flock (some NFS) stores
  // unlocked, as before there was a lock.
  explicit CacheLock(const std::filesystem::path& lock_path)
      : fd_(::open(lock_path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ < 0) {
      why_not_ = "can't create " + lock_path.string() + ": " + std::strerror(errno);
    } else if (::flock(fd_, LOCK_EX) != 0 && errno != ENOLCK && errno != EOPNOTSUPP) {
      why_not_ = "can't lock " + lock_path.string() + ": " + std::strerror(errno);
    }
  }
  ~CacheLock() {
    if (fd_ >= 0) ::close(fd_);  // and the lock with it
  }
  CacheLock(const CacheLock&) = delete;
  CacheLock& operator=(const CacheLock&) = delete;
  const std::string& why_not() const { return why_not_; }

 private:
  int fd_;
  std::string why_not_;
};

}  // namespace

RateCache::RateCache(std::filesystem::path file) : file_(std::move(file)), entries_(read_entries(file_)) {}

std::optional<MeasuredRates> RateCache::find(const std::string& key) const {
  const auto it = entries_.find(one_field(key));
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> RateCache::store(const std::string& key, const MeasuredRates& rates) {
  entries_[one_field(key)] = rates;
  if (file_.empty()) return "no directory to keep it in (PAES_CACHE_DIR, XDG_CACHE_HOME and HOME are unset)";
  std::error_code ec;
  std::filesystem::create_directories(file_.parent_path(), ec);
  if (ec) return "can't create " + file_.parent_path().string() + ": " + ec.message();
  const CacheLock lock(file_.string() + ".lock");
  if (!lock.why_not().empty()) return lock.why_not();
  // What other processes stored since this one read the file stays; this
  // key's line is this store's.
  std::map<std::string, MeasuredRates> merged = read_entries(file_);
  merged[one_field(key)] = rates;
  const std::filesystem::path temp = file_.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::trunc);
    if (!out) return "can't create " + temp.string() + ": " + std::strerror(errno);
    out.precision(17);
    for (const auto& [k, r] : merged) {
      out << k << '\t' << (r.found_gpu() ? r.gpu : std::string("none")) << '\t' << r.gpu_bytes_per_s << '\t'
          << r.cpu_bytes_per_s << '\t' << r.gpu_start_seconds << '\t' << one_field(r.device) << '\n';
    }
    if (!out.flush()) {
      std::filesystem::remove(temp, ec);
      return "can't write " + temp.string();
    }
  }
  std::filesystem::rename(temp, file_, ec);
  if (ec) {
    const std::string why = "can't replace " + file_.string() + ": " + ec.message();
    std::filesystem::remove(temp, ec);
    return why;
  }
  entries_ = std::move(merged);
  return std::nullopt;
}

}  // namespace paes
