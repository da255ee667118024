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
  // By name, whether or not this build has the engine (parse_engine knows
  // only those it has): the key holds the engines built in, so a line of a
  // build without it is never looked up.
  if (!(rates.gpu_bytes_per_s > 0) || !(rates.cpu_bytes_per_s > 0)) return std::nullopt;
  for (const EngineKind gpu : {EngineKind::cuda, EngineKind::opencl}) {
    if (engine == engine_name(gpu)) {
      rates.gpu = gpu;
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

}  // namespace

RateCache::RateCache(std::filesystem::path file) : file_(std::move(file)) {
  if (file_.empty()) return;
  std::ifstream in(file_);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    if (!std::getline(fields, key, '\t') || key.empty()) continue;
    if (std::optional<MeasuredRates> rates = parse_rates(fields)) entries_[key] = std::move(*rates);
  }
}

std::optional<MeasuredRates> RateCache::find(const std::string& key) const {
  const auto it = entries_.find(one_field(key));
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

void RateCache::store(const std::string& key, const MeasuredRates& rates) {
  entries_[one_field(key)] = rates;
  if (file_.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(file_.parent_path(), ec);
  const std::filesystem::path temp = file_.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::trunc);
    out.precision(17);
    for (const auto& [k, r] : entries_) {
      out << k << '\t' << (r.found_gpu() ? engine_name(r.gpu) : "none") << '\t' << r.gpu_bytes_per_s << '\t'
          << r.cpu_bytes_per_s << '\t' << r.gpu_start_seconds << '\t' << one_field(r.device) << '\n';
    }
    if (!out.flush()) {
      std::filesystem::remove(temp, ec);
      return;
    }
  }
  std::filesystem::rename(temp, file_, ec);
  if (ec) std::filesystem::remove(temp, ec);
}

}  // namespace paes
