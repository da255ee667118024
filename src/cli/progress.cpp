#include "cli/progress.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iterator>
#include <optional>
#include <sstream>
#include <string_view>
#include <utility>

#include "cli/say.hpp"

namespace paes::cli {
namespace {

constexpr auto kRedrawInterval = std::chrono::milliseconds(200);
// Work done within this many seconds never shows a line.
constexpr double kQuietSeconds = 1.0;
// Without a terminal and with the total unknown, a plain line this often.
constexpr double kPlainLineSeconds = 10.0;
// The longest ETA worth showing exactly (99:59:59); a stalled input would
// otherwise give absurd, line-widening figures.
constexpr double kLongestShownEtaSeconds = 100 * 3600.0;

std::string fixed_point(double value, int decimals) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(decimals) << value;
  return text.str();
}

std::string pad_left(std::string text, std::size_t width) {
  if (text.size() < width) text.insert(0, width - text.size(), ' ');
  return text;
}


// In the sizes' binary units: "1.5 GiB / 3.0 GiB  50%  120.0 MiB/s", not MiB beside MB/s.
std::string format_rate(double bytes_per_second) {
  constexpr double kMiB = 1 << 20, kGiB = 1 << 30;
  if (bytes_per_second >= kGiB) return fixed_point(bytes_per_second / kGiB, 2) + " GiB/s";
  return fixed_point(bytes_per_second / kMiB, 1) + " MiB/s";
}

// One progress line per terminal: two paes in a pipeline on one terminal
// (`paes encrypt ... | paes decrypt ... -o x`) would redraw the same line in
// turn. Each draws only while it holds an exclusive flock on the terminal
// (its device inode, which every process on it opens); the other waits its
// turn, and takes over the line when the first is done.
class TerminalTurn {
 public:
  TerminalTurn() {
    if (const char* name = ::ttyname(STDERR_FILENO)) fd_ = ::open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  }
  ~TerminalTurn() {
    if (fd_ >= 0) ::close(fd_);  // the lock goes with it
  }
  TerminalTurn(const TerminalTurn&) = delete;
  TerminalTurn& operator=(const TerminalTurn&) = delete;
  // Whether this process may draw now; a terminal it can't open or lock is its own.
  bool mine() {
    if (!held_) held_ = fd_ < 0 || ::flock(fd_, LOCK_EX | LOCK_NB) == 0;
    return held_;
  }

 private:
  int fd_ = -1;
  bool held_ = false;
};

// m:ss below an hour, h:mm:ss from there.
std::string format_duration(std::uint64_t seconds) {
  const auto hours = static_cast<unsigned long long>(seconds / 3600);
  const auto minutes = static_cast<unsigned long long>(seconds / 60 % 60);
  const auto secs = static_cast<unsigned long long>(seconds % 60);
  char text[32];
  if (hours == 0) {
    std::snprintf(text, sizeof text, "%llu:%02llu", minutes, secs);
  } else {
    std::snprintf(text, sizeof text, "%llu:%02llu:%02llu", hours, minutes, secs);
  }
  return text;
}

// Whole percent, rounded down so 100% means done.
unsigned percent_done(std::uint64_t done, std::uint64_t total) {
  if (done >= total) return 100;
  const double fraction = static_cast<double>(done) / static_cast<double>(total);
  return std::min(99u, static_cast<unsigned>(fraction * 100));
}

void write_stderr(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

// The terminal's width in columns, 0 when unknown.
std::size_t terminal_columns() {
  struct winsize size {};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

// Whether a progress line is on the terminal now, for a signal handler that
// ends paes: it clears the line, so the shell's next text starts clean.
std::atomic<bool> g_line_drawn{false};
static_assert(std::atomic<bool>::is_always_lock_free, "read in a signal handler");

}  // namespace

void clear_progress_line_at_exit() noexcept {
  if (!g_line_drawn.load()) return;
  static constexpr char kClear[] = "\r\x1b[K";
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, kClear, sizeof kClear - 1);
}

std::string format_size(std::uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  static constexpr std::string_view kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024;
  std::size_t unit = 0;
  // GiB and up get a second decimal: a tenth of a GiB is too coarse to watch.
  const auto decimals = [&] { return unit >= 2 ? 2 : 1; };
  // The unit is chosen by the value as shown, rounded: 1048575 B is
  // "1.0 MiB", not "1024.0 KiB".
  const auto shown_reaches_next_unit = [&] {
    return value + 0.5 * std::pow(10.0, -decimals()) >= 1024;
  };
  while (shown_reaches_next_unit() && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return fixed_point(value, decimals()) + " " + std::string(kUnits[unit]);
}

std::string format_progress_line(std::uint64_t done, std::uint64_t total, double seconds_elapsed) {
  // Fixed-width fields keep the line from jittering as the numbers change.
  std::string line = pad_left(format_size(done), 11);
  if (total != 0) {
    line += " / " + format_size(total) + "  " + pad_left(std::to_string(percent_done(done, total)) + "%", 4);
  }
  if (seconds_elapsed <= 0) return line;
  const double rate = static_cast<double>(done) / seconds_elapsed;
  line += "  " + pad_left(format_rate(rate), 10);
  if (total != 0 && rate > 0) {
    const std::uint64_t remaining = done < total ? total - done : 0;
    const double eta = std::ceil(static_cast<double>(remaining) / rate);
    line += "   ETA ";
    line += eta < kLongestShownEtaSeconds ? format_duration(static_cast<std::uint64_t>(eta)) : ">99h";
  }
  return line;
}

Progress::Progress(std::uint64_t total, ProgressMode mode, std::string label)
    : total_(total), label_(std::move(label)) {
  const bool shown =
      mode == ProgressMode::always || (mode == ProgressMode::automatic && ::isatty(STDERR_FILENO));
  if (shown) drawer_ = std::thread([this] { redraw_until_finished(); });
}

Progress::~Progress() { finish(); }

void Progress::finish() {
  if (!drawer_.joinable()) return;
  {
    const std::lock_guard lock(mutex_);
    finishing_ = true;
  }
  wake_.notify_one();
  drawer_.join();
}

void Progress::redraw_until_finished() {
  // Into a log or a pipe (--progress without a terminal), "\r" and "\x1b[K"
  // would be litter: plain lines instead, the first, then one each tenth of
  // the total (each kPlainLineSeconds when the total is unknown), and the
  // last state at the end.
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  std::optional<TerminalTurn> turn;
  if (terminal) turn.emplace();
  bool drawn = false;
  unsigned plain_tenth = 0;
  double plain_at = 0;
  std::uint64_t plain_done = 0;
  double elapsed = 0;
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, kRedrawInterval, [this] { return finishing_; })) {
    const auto started = started_.load(std::memory_order_acquire);
    if (started == 0) continue;  // no data yet: maybe a prompt on the terminal
    const auto since = std::chrono::steady_clock::now().time_since_epoch() - std::chrono::steady_clock::duration(started);
    elapsed = std::chrono::duration<double>(since).count();
    if (elapsed < kQuietSeconds) continue;
    const std::uint64_t done = done_.load(std::memory_order_relaxed);
    std::string line = label_ + files_part() + format_progress_line(done, total_, elapsed);
    if (!terminal) {
      const unsigned tenth = total_ != 0 ? percent_done(done, total_) / 10 : 0;
      const bool due = total_ != 0 ? tenth != plain_tenth : elapsed - plain_at >= kPlainLineSeconds;
      if (drawn && !due) continue;
      plain_tenth = tenth;
      plain_at = elapsed;
      plain_done = done;
      write_stderr(line + "\n");
      drawn = true;
      continue;
    }
    if (!turn->mine()) continue;  // another paes draws on this terminal
    // A line as wide as the terminal wraps, and "\r" returns only to the
    // start of its last row: every redraw would leave a row behind.
    if (const std::size_t columns = terminal_columns(); columns > 1 && line.size() > columns - 1) {
      line.resize(columns - 1);
    }
    g_line_drawn.store(true);  // before the line: a signal in between must clear it
    write_stderr("\r" + line + "\x1b[K");
    line_on_terminal_ = true;
    drawn = true;
  }
  if (!drawn) return;
  if (terminal) {
    write_stderr("\r\x1b[K");
    g_line_drawn.store(false);
    line_on_terminal_ = false;
  } else if (const std::uint64_t done = done_.load(std::memory_order_relaxed); done != plain_done) {
    write_stderr(label_ + files_part() + format_progress_line(done, total_, elapsed) + "\n");
  }
}

std::string Progress::files_part() const {
  const std::uint64_t total = files_total_.load(std::memory_order_relaxed);
  if (total == 0) return "";
  return std::to_string(files_done_.load(std::memory_order_relaxed)) + "/" + std::to_string(total) + " files ";
}

void Progress::say_above(const std::string& text) {
  const std::lock_guard lock(mutex_);
  if (line_on_terminal_) {
    write_stderr("\r\x1b[K");
    line_on_terminal_ = false;
  }
  say(text);
}

}  // namespace paes::cli
