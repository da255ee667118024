// A one-line progress display on stderr for long encryptions and decryptions.
// Workers report bytes with one relaxed atomic add; a background thread
// redraws the line every 200 ms, and only once the work has moved data for a
// second, so short runs and scripts see nothing. Without a terminal (--progress
// into a log) it writes plain lines instead: one each tenth of the work.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace paes::cli {

enum class ProgressMode {
  automatic,  // shown when stderr is a terminal (and the output is not printed on it)
  always,
  never,
};

// The line without the label, e.g.
//   "  412.0 MiB / 1.00 GiB   40%   1.21 GB/s   ETA 0:01".
// Sizes in binary units, the rate in decimal GB/s or MB/s as elsewhere in
// paes. `total` 0 means unknown: then no total, percentage or ETA. No rate or
// ETA before any time has elapsed; no ETA while nothing is done. Under 60
// columns for sizes below 1000 TiB and rates below 1000 GB/s, which leaves
// room for a label on an 80-column terminal.
// Bytes in binary units, e.g. "412.0 MiB", "1.00 GiB", "17 B".
std::string format_size(std::uint64_t bytes);

std::string format_progress_line(std::uint64_t done, std::uint64_t total, double seconds_elapsed);

// Clears the progress line if one is on the terminal: for a handler of a
// signal that ends paes, and an exit hook. Async-signal-safe.
void clear_progress_line_at_exit() noexcept;

class Progress {
 public:
  // `total` is the byte count the work will reach, 0 if unknown. `label`
  // starts the line, e.g. "encrypting ".
  Progress(std::uint64_t total, ProgressMode mode, std::string label);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Safe from any thread; cheap enough to call once per chunk. The first
  // bytes start the clock: nothing is drawn before the work moves data, so a
  // passphrase prompt or a key derivation before it is never drawn over,
  // and the rate counts the work alone.
  void advance(std::uint64_t bytes) noexcept {
    if (done_.fetch_add(bytes, std::memory_order_relaxed) == 0 && bytes != 0) {
      started_.store(std::chrono::steady_clock::now().time_since_epoch().count(), std::memory_order_release);
    }
  }

  // The work is done: if the bytes counted fall short of the total (an
  // armored input's are estimated), the last state shown is the total all
  // the same. Call it once no thread advances any more, before finish().
  void reach_total() noexcept {
    const std::uint64_t done = done_.load(std::memory_order_relaxed);
    if (done < total_) advance(total_ - done);
  }

  // A data set's display counts its files too: "12/1000 files" before the
  // bytes. Call it before any file is done.
  void count_files(std::uint64_t total) noexcept { files_total_.store(total, std::memory_order_relaxed); }
  void file_done() noexcept { files_done_.fetch_add(1, std::memory_order_relaxed); }

  // Writes `text` (whole lines) on stderr above the display: a terminal's
  // line is cleared first, and drawn again at the next redraw. Safe from
  // any thread.
  void say_above(const std::string& text);

  // Stops the display and clears its line, so what paes prints next starts
  // on a clean line. Idempotent; call it from the thread that owns the object.
  void finish();

 private:
  void redraw_until_finished();
  std::string files_part() const;

  const std::uint64_t total_;
  const std::string label_;
  std::atomic<std::uint64_t> done_{0};
  std::atomic<std::uint64_t> files_total_{0};  // 0: not a data set (the drawer reads it)
  std::atomic<std::uint64_t> files_done_{0};
  // When the first bytes came (steady_clock ticks); 0 until then.
  std::atomic<std::chrono::steady_clock::rep> started_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool finishing_ = false;  // guarded by mutex_
  bool line_on_terminal_ = false;  // guarded by mutex_
  std::thread drawer_;      // not started when the display is off
};

}  // namespace paes::cli
