// An age plugin's process: the program age-plugin-NAME, found on PATH,
// started with --age-plugin=STATE_MACHINE, and talked to over its standard
// input and output (C2SP age-plugin.md).
//
// - PATH only: its entries that are not absolute paths ("", ".", "bin")
//   are skipped, so a file in the working directory is never run, as
//   age-plugin.md asks.
// - Its standard input and output are one end of a socket pair, so a
//   plugin that exits while paes writes makes the write fail (send with
//   MSG_NOSIGNAL), not SIGPIPE end paes. Writing also drains what the
//   plugin writes meanwhile, so a plugin that writes before it reads can't
//   deadlock the two.
// - Its standard error is kept (the last 64 KiB), for the message when it
//   fails; a plugin's stderr is not trusted on paes' own stderr.
// - It runs in a process group of its own: ending the process (the
//   destructor, or end_helper_processes() from the handler of SIGINT and
//   the other ending signals) ends whatever it started too. No timeout: a
//   hardware key may wait for a touch.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace paes {

class PluginProcess {
 public:
  // Starts age-plugin-`name` (a name age-plugin.md allows). Throws Error
  // naming the program to install when PATH has none, and when it can't
  // start.
  PluginProcess(const std::string& name, std::string_view state_machine);
  ~PluginProcess();
  PluginProcess(const PluginProcess&) = delete;
  PluginProcess& operator=(const PluginProcess&) = delete;

  // "age-plugin-NAME", for messages.
  const std::string& program() const { return program_; }

  // Writes all of `bytes`. Throws Error when the plugin is gone.
  void write(std::string_view bytes);
  // Up to buffer.size() bytes of the plugin's output; 0 at its end.
  std::size_t read(std::span<std::uint8_t> buffer);
  // Ends the plugin's input and waits for it to exit: at once when `stop`
  // (its group is sent SIGTERM: the session failed), else for it to exit by
  // itself; a plugin still running kExitGrace later is killed with its group.
  // Its exit status; nothing when it was stopped or died of a signal.
  std::optional<int> finish(bool stop);
  // The last line the plugin wrote on stderr, its control characters
  // escaped (empty when it wrote none).
  std::string last_stderr_line() const;

 private:
  void drain(bool wait_for_output);
  void keep_stderr(std::string_view text);
  void wait_for_exit(bool stop);

  std::string program_;
  pid_t pid_ = -1;
  int io_fd_ = -1;      // paes' end of the socket pair
  int stderr_fd_ = -1;  // the read end of the plugin's stderr
  int slot_ = -1;       // where end_helper_processes() finds the process group
  std::string pending_;  // output read while writing, not yet handed out
  std::string stderr_;   // the last kMaxStderr bytes of its stderr
  int status_ = 0;
  bool exited_ = false;
  bool stopped_ = false;  // paes ended it with a signal
  bool output_ended_ = false;
};

}  // namespace paes
