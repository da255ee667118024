// What --engine auto measured, kept between runs: for a kind of job on this
// machine (CPU, AES library, threads, GPU stack, mode, direction and key
// size), which GPU it found, how fast the threads engine ran in memory on
// that GPU's backend with its transfers, how long starting it took, and how
// fast the threads engine ran on the CPU's backend. Later jobs decide from
// these without starting a driver, and never start a device the CPU beats
// (auto_backend.hpp).
//
// One line per entry, "KEY<TAB>BACKEND<TAB>GPU_BYTES_PER_S<TAB>CPU_BYTES_PER_S
// <TAB>GPU_START_SECONDS<TAB>DEVICE", BACKEND "none" (and zero rates) where
// auto found no GPU for the job. In $PAES_CACHE_DIR/auto-rates (else
// $XDG_CACHE_HOME/paes where that is absolute, else ~/.cache/paes). It holds
// no secret. A cache that can't be read or written is no error: auto looks
// and measures again (and says it could not keep what it measured); a line
// it can't parse (one of an older paes among them) is dropped. Processes that
// store at once don't lose each other's lines: each store re-reads the file
// under a lock (auto-rates.lock beside it) and adds its line to what it finds.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>


namespace paes {

struct MeasuredRates {
  std::string gpu;     // the GPU backend measured (its name); empty: no GPU for this job
  std::string device;  // its device's name, as the driver gives it
  double gpu_bytes_per_s = 0;
  double cpu_bytes_per_s = 0;
  double gpu_start_seconds = 0;  // finding the device, starting its driver and engine, the self-test

  bool found_gpu() const { return !gpu.empty(); }
};

class RateCache {
 public:
  // Where the cache lives; empty when there is no home to put it in.
  static std::filesystem::path default_path();

  explicit RateCache(std::filesystem::path file);
  std::optional<MeasuredRates> find(const std::string& key) const;
  // Records `rates` and rewrites the file with them and the lines it holds
  // now (a temporary renamed into place, so a reader never sees half of it).
  // Returns why the file could not be written (it is then as it was), or
  // nothing when it was.
  std::optional<std::string> store(const std::string& key, const MeasuredRates& rates);
  const std::map<std::string, MeasuredRates>& entries() const { return entries_; }

 private:
  std::filesystem::path file_;
  std::map<std::string, MeasuredRates> entries_;
};

}  // namespace paes
