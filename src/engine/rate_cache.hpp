// What --engine auto measured, kept between runs: for a job kind on this
// machine (CPU, threads, GPU device, mode and key size), the rate of the GPU
// engine with its transfers and of the threads engine, in memory. Auto then
// starts a GPU only where it measured faster, without measuring again.
//
// One line per entry, "KEY<TAB>GPU_BYTES_PER_S<TAB>CPU_BYTES_PER_S", in
// $PAES_CACHE_DIR/auto-rates (else $XDG_CACHE_HOME/paes, else
// ~/.cache/paes). It holds no secret. A cache that can't be read or written
// is no error: auto measures again.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace paes {

struct MeasuredRates {
  double gpu_bytes_per_s = 0;
  double cpu_bytes_per_s = 0;
};

class RateCache {
 public:
  // Where the cache lives; empty when there is no home to put it in.
  static std::filesystem::path default_path();

  explicit RateCache(std::filesystem::path file);
  std::optional<MeasuredRates> find(const std::string& key) const;
  // Records `rates` and rewrites the file (a temporary renamed into place,
  // so a reader never sees half of it); failures leave the cache as it was.
  void store(const std::string& key, const MeasuredRates& rates);

 private:
  std::filesystem::path file_;
  std::map<std::string, MeasuredRates> entries_;
};

}  // namespace paes
