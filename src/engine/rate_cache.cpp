#include "engine/rate_cache.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

namespace paes {

std::filesystem::path RateCache::default_path() {
  if (const char* dir = std::getenv("PAES_CACHE_DIR"); dir != nullptr && *dir != '\0') {
    return std::filesystem::path(dir) / "auto-rates";
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::filesystem::path(xdg) / "paes" / "auto-rates";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::filesystem::path(home) / ".cache" / "paes" / "auto-rates";
  }
  return {};
}

RateCache::RateCache(std::filesystem::path file) : file_(std::move(file)) {
  if (file_.empty()) return;
  std::ifstream in(file_);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    MeasuredRates rates;
    if (std::getline(fields, key, '\t') && fields >> rates.gpu_bytes_per_s >> rates.cpu_bytes_per_s &&
        rates.gpu_bytes_per_s > 0 && rates.cpu_bytes_per_s > 0) {
      entries_[key] = rates;  // a line that doesn't parse is left out
    }
  }
}

std::optional<MeasuredRates> RateCache::find(const std::string& key) const {
  const auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

void RateCache::store(const std::string& key, const MeasuredRates& rates) {
  entries_[key] = rates;
  if (file_.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(file_.parent_path(), ec);
  const std::filesystem::path temp = file_.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::trunc);
    for (const auto& [k, r] : entries_) out << k << '\t' << r.gpu_bytes_per_s << '\t' << r.cpu_bytes_per_s << '\n';
    if (!out.flush()) {
      std::filesystem::remove(temp, ec);
      return;
    }
  }
  std::filesystem::rename(temp, file_, ec);
  if (ec) std::filesystem::remove(temp, ec);
}

}  // namespace paes
