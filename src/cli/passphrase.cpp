#include "cli/passphrase.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string_view>

#include "cli/say.hpp"
#include "paes/endpoint.hpp"
#include "paes/error.hpp"
#include "util/printable.hpp"

namespace paes::cli {
namespace {

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) noexcept : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const noexcept { return fd_; }

 private:
  int fd_;
};

// Fills `buffer` from `fd` (after its first `len` bytes, already filled)
// until end of file, until it is full, or, with
// `stop_at_line_end`, until a read brings a '\n' (a terminal hands over one
// line per read, so nothing past the line is consumed). Returns the byte count.
std::size_t read_into(int fd, SecretBytes& buffer, bool stop_at_line_end, const std::string& what,
                      std::size_t len = 0) {
  while (len < buffer.size()) {
    const ssize_t n = ::read(fd, buffer.data() + len, buffer.size() - len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw system_error(what);
    if (n == 0) break;
    const std::uint8_t* fresh = buffer.data() + len;
    len += static_cast<std::size_t>(n);
    if (stop_at_line_end && std::memchr(fresh, '\n', static_cast<std::size_t>(n)) != nullptr) break;
  }
  return len;
}

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw system_error("writing to the terminal");
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

// The signals that would otherwise end paes with the terminal left silent.
constexpr std::array kTerminalRestoringSignals{SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// What the signal handler needs. A handler may only touch plain static state;
// these are written before the handlers are installed and only read while
// they are.
int g_silenced_tty = -1;
termios g_tty_settings_to_restore{};
std::array<struct sigaction, kTerminalRestoringSignals.size()> g_previous_actions{};

// Puts the terminal back, then lets the signal take the course it had before
// the prompt: the default action (ending paes), or a handler paes installed
// earlier, such as the one that removes a half-written output file.
extern "C" void restore_terminal_and_reraise(int signal_number) {
  ::tcsetattr(g_silenced_tty, TCSANOW, &g_tty_settings_to_restore);
  // Echo was off, so the cursor still sits after the prompt.
  [[maybe_unused]] const ssize_t ignored = ::write(g_silenced_tty, "\n", 1);
  for (std::size_t i = 0; i < kTerminalRestoringSignals.size(); ++i) {
    if (kTerminalRestoringSignals[i] == signal_number) {
      ::sigaction(signal_number, &g_previous_actions[i], nullptr);
    }
  }
  // Blocked until this handler returns, then delivered to the previous action.
  ::raise(signal_number);
}

bool is_ignored(const struct sigaction& action) {
  return (action.sa_flags & SA_SIGINFO) == 0 && action.sa_handler == SIG_IGN;
}

// While alive, the signals above restore `settings` on `tty` before taking
// effect. A signal that was ignored stays ignored: paes run in the background
// by a non-interactive shell must not become killable by it.
class RestoreTerminalOnSignal {
 public:
  RestoreTerminalOnSignal(int tty, const termios& settings) {
    g_silenced_tty = tty;
    g_tty_settings_to_restore = settings;
    struct sigaction restoring {};
    restoring.sa_handler = restore_terminal_and_reraise;
    sigemptyset(&restoring.sa_mask);
    for (std::size_t i = 0; i < kTerminalRestoringSignals.size(); ++i) {
      ::sigaction(kTerminalRestoringSignals[i], nullptr, &g_previous_actions[i]);
      installed_[i] = !is_ignored(g_previous_actions[i]);
      if (installed_[i]) ::sigaction(kTerminalRestoringSignals[i], &restoring, nullptr);
    }
  }
  ~RestoreTerminalOnSignal() {
    for (std::size_t i = 0; i < kTerminalRestoringSignals.size(); ++i) {
      if (installed_[i]) ::sigaction(kTerminalRestoringSignals[i], &g_previous_actions[i], nullptr);
    }
  }
  RestoreTerminalOnSignal(const RestoreTerminalOnSignal&) = delete;
  RestoreTerminalOnSignal& operator=(const RestoreTerminalOnSignal&) = delete;

 private:
  std::array<bool, kTerminalRestoringSignals.size()> installed_{};
};

termios current_settings(int tty) {
  termios settings{};
  if (::tcgetattr(tty, &settings) != 0) throw system_error("reading the terminal settings");
  return settings;
}

// Turns echo off on `tty` for its lifetime. The destructor restores the
// settings before the member's destructor puts the old signal actions back,
// so no signal can arrive with echo off and no handler to restore it.
class EchoOff {
 public:
  explicit EchoOff(int tty) : tty_(tty), saved_(current_settings(tty)), on_signal_(tty, saved_) {
    termios silent = saved_;
    // ECHONL too: paes prints the newline itself, once.
    silent.c_lflag &= ~tcflag_t{ECHO | ECHONL};
    // TCSAFLUSH drops anything typed before the prompt, while echo was on.
    if (::tcsetattr(tty_, TCSAFLUSH, &silent) != 0) throw system_error("turning off echo on the terminal");
  }
  ~EchoOff() { ::tcsetattr(tty_, TCSANOW, &saved_); }
  EchoOff(const EchoOff&) = delete;
  EchoOff& operator=(const EchoOff&) = delete;

 private:
  int tty_;
  termios saved_;
  RestoreTerminalOnSignal on_signal_;
};

SecretBytes prompt(int tty, std::string_view question) {
  write_all(tty, question);
  // Room for the longest passphrase and its line ending.
  SecretBytes buffer(kMaxTerminalPassphraseLen + 2);
  const std::size_t len = read_into(tty, buffer, true, "reading the passphrase from the terminal");
  write_all(tty, "\n");
  const std::size_t line_len = first_line_length(buffer.view().first(len));
  if (line_len > kMaxTerminalPassphraseLen) {
    // Left unread, the rest of the line would reach the shell as a command.
    ::tcflush(tty, TCIFLUSH);
    throw Error("passphrase is longer than " + std::to_string(kMaxTerminalPassphraseLen) + " bytes");
  }
  return SecretBytes(buffer.data(), line_len);
}

// Who besides its owner a mode lets do something: other users, the group, or
// no one (nullptr).
const char* others_allowed(mode_t mode, mode_t group_bit, mode_t other_bit) {
  if ((mode & other_bit) != 0) return "other users";
  if ((mode & group_bit) != 0) return "its group";
  return nullptr;
}

bool same_bytes(const SecretBytes& a, const SecretBytes& b) {
  return a.size() == b.size() && std::equal(a.data(), a.data() + a.size(), b.data());
}

}  // namespace

// Like ssh with a private key, but a warning rather than a refusal: the
// secret has already been exposed, and refusing would only break a backup job.
// Readable by others, the secret has leaked; writable by others or owned by
// another user (root aside: root can change any file anyway), someone else can
// swap in a key or passphrase of their choosing and read what paes encrypts
// with it. Only regular files: a pipe or /dev/stdin has no meaningful mode.
void warn_if_exposed(int fd, const std::string& what) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
  const char* readers = others_allowed(st.st_mode, S_IRGRP, S_IROTH);
  const char* writers = others_allowed(st.st_mode, S_IWGRP, S_IWOTH);
  if (readers != nullptr || writers != nullptr) {
    std::string who;
    if (readers != nullptr && writers != nullptr && std::strcmp(readers, writers) == 0) {
      who = std::string("readable and writable by ") + readers;
    } else {
      if (readers != nullptr) who = std::string("readable by ") + readers;
      if (writers != nullptr) who += (who.empty() ? "" : " and ") + std::string("writable by ") + writers;
    }
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    say("paes: warning: " + printable(what) + " is " + who + " (mode " + mode + "); restrict it with chmod 600\n");
  }
  if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
    const passwd* owner = ::getpwuid(st.st_uid);
    say("paes: warning: " + printable(what) + " belongs to " +
        (owner != nullptr ? "user " + std::string(owner->pw_name) + " (uid " : "uid ") + std::to_string(st.st_uid) +
        (owner != nullptr ? ")" : "") + ", who can change it; use a file that you or root own\n");
  }
}

std::size_t first_line_length(std::span<const std::uint8_t> text) {
  const auto newline = std::find(text.begin(), text.end(), std::uint8_t{'\n'});
  std::size_t len = static_cast<std::size_t>(newline - text.begin());
  if (newline != text.end() && len > 0 && text[len - 1] == '\r') --len;
  return len;
}

std::string secret_file_name(const std::string& noun, const std::string& option, const std::string& path) {
  return path == "-" ? "standard input (" + option + " -)" : noun + " " + path;
}

SecretBytes read_secret_file(const std::string& path, std::size_t max_len, const std::string& what,
                             const std::string& terminal_hint, bool (*sealed)(std::span<const std::uint8_t>)) {
  // A duplicate, so that closing it leaves standard input open, at the
  // offset it shares.
  const FileDescriptor file(path == "-" ? ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0)
                                        : ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (file.get() < 0) throw system_error(what);
  // A key is not typed, and a passphrase typed here would show as it is.
  if (::isatty(file.get()) != 0) throw usage_error(what + " is a terminal: " + terminal_hint);
  // One byte over the limit tells an oversized file from one exactly at it.
  // A regular file's own size (and that byte) sizes the first buffer: the
  // bound's 64 KiB of locked memory, faulted in, zeroed and wiped, cost a
  // 200-byte identity a tenth of a millisecond, 4% of a small job.
  std::size_t capacity = max_len + 1;
  struct stat st {};
  if (::fstat(file.get(), &st) == 0 && S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) < max_len) {
    capacity = static_cast<std::size_t>(st.st_size) + 1;
  }
  SecretBytes content(capacity);
  std::size_t len = read_into(file.get(), content, false, what);
  if (len == capacity && capacity <= max_len) {
    // The file grew after fstat: the rest goes into a buffer of the bound.
    SecretBytes whole(max_len + 1);
    std::memcpy(whole.data(), content.data(), len);
    content = std::move(whole);
    len = read_into(file.get(), content, false, what, len);
  }
  if (sealed == nullptr || !sealed(content.view().first(len))) warn_if_exposed(file.get(), what);
  if (len > max_len) {
    throw usage_error(what + " is larger than " + std::to_string(max_len) + " bytes; it should hold just the secret");
  }
  return SecretBytes(content.data(), len);
}

std::size_t openssl_passphrase_length(std::span<const std::uint8_t> text) {
  const auto read = text.first(std::min(text.size(), kOpensslMaxFilePassphraseLen));
  const auto end = std::find_if(read.begin(), read.end(), [](std::uint8_t b) { return b == '\n' || b == 0; });
  return static_cast<std::size_t>(end - read.begin());
}

SecretBytes passphrase_from_file(const std::string& path, PassphraseFileRule rule) {
  const std::string what = secret_file_name("passphrase file", "--passphrase-file", path);
  const SecretBytes content = read_secret_file(
      path, kMaxPassphraseFileLen, what, "leave out --passphrase-file, and paes asks there without echo");
  const std::size_t line_len = first_line_length(content.view());
  std::size_t len = line_len;
  if (rule == PassphraseFileRule::openssl) {
    // openssl's rule, so that openssl and paes derive the same key from the
    // file; where it is not the plain first line, say so, or a passphrase
    // typed elsewhere would silently fail to match.
    len = openssl_passphrase_length(content.view());
    if (len > line_len) {
      say("paes: warning: " + printable(what) + " ends its first line with \"\\r\\n\": with --pbkdf2 the "
          "'\\r' is part of the passphrase, as for openssl enc -pass file:\n");
    } else if (len < line_len && content.data()[len] == 0) {
      say("paes: warning: " + printable(what) + " holds a NUL byte in its first line: with --pbkdf2 only the "
          "bytes before it are the passphrase, as for openssl enc -pass file:\n");
    } else if (len < line_len) {
      say("paes: warning: the first line of " + printable(what) + " is longer than " +
          std::to_string(kOpensslMaxFilePassphraseLen) + " bytes: with --pbkdf2 only the first " +
          std::to_string(kOpensslMaxFilePassphraseLen) + " are the passphrase, as for openssl enc -pass file:\n");
    }
  }
  if (len == 0) throw usage_error("empty passphrase in " + (path == "-" ? what : path));
  return SecretBytes(content.data(), len);
}

void refuse_output_over_secrets(const std::string& output, const std::vector<SecretFile>& secrets) {
  const bool to_stdout = names_stdio(output);
  struct stat out {};
  if ((to_stdout ? ::fstat(STDOUT_FILENO, &out) : ::stat(output.c_str(), &out)) != 0 || !S_ISREG(out.st_mode)) return;
  for (const SecretFile& secret : secrets) {
    struct stat st {};
    // "-": the file standard input was redirected from (`--key-file - < KEY`).
    const bool from_stdin = secret.path == "-";
    if (secret.path.empty() || (from_stdin ? ::fstat(STDIN_FILENO, &st) : ::stat(secret.path.c_str(), &st)) != 0) {
      continue;
    }
    if (st.st_dev != out.st_dev || st.st_ino != out.st_ino) continue;
    throw usage_error((to_stdout ? std::string("standard output") : "-o " + output) + " is the file given to " +
                      secret.option + " " + secret.path + (from_stdin ? " (on standard input)" : "") +
                      ": the output would replace it, and what it holds would be lost; write the output elsewhere");
  }
}

namespace {

// A name of the descriptor itself (/dev/stdin, /dev/fd/0), or "-": reading it
// uses standard input up. (A file that stdin was redirected from, named by
// its own path, is read afresh.)
bool names_standard_input(const std::string& path) {
  return path == "-" || descriptor_named(path) == STDIN_FILENO;
}

}  // namespace

void refuse_reading_standard_input_twice(const std::vector<SecretFile>& readers, const std::string& input,
                                         std::string_view job) {
  std::vector<std::string> on_stdin;
  for (const SecretFile& reader : readers) {
    if (!reader.path.empty() && names_standard_input(reader.path)) on_stdin.push_back(reader.option + " " + reader.path);
  }
  if (on_stdin.size() > 1) {
    throw usage_error(on_stdin[0] + " and " + on_stdin[1] + " both read standard input, which is read once");
  }
  if (on_stdin.size() == 1 && (input.empty() || names_standard_input(input))) {
    throw usage_error(on_stdin[0] + " reads standard input, which is also the input to " + std::string(job) +
                      ": name the input file");
  }
}

const char* secret_from_env(const std::string& var, const char* option) {
  const char* value = std::getenv(var.c_str());
  if (value == nullptr) {
    throw Error(std::string(option) + ": no environment variable of that name is set (it takes the variable's name, "
                "as in " + option + " PAES_SECRET, not its value)");
  }
  return value;
}

SecretBytes passphrase_from_env(const std::string& var) {
  const char* value = secret_from_env(var, "--passphrase-env");
  const std::size_t len = std::strlen(value);
  if (len == 0) throw usage_error("environment variable " + var + " holds an empty passphrase");
  return SecretBytes(reinterpret_cast<const std::uint8_t*>(value), len);
}

std::optional<SecretBytes> ask_on_terminal(std::string_view question, bool echo) {
  const FileDescriptor tty(::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY));
  if (tty.get() < 0) return std::nullopt;
  if (echo) return prompt(tty.get(), question);
  const EchoOff echo_off(tty.get());
  return prompt(tty.get(), question);
}

SecretBytes passphrase_from_terminal(bool confirm) {
  const FileDescriptor tty(::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY));
  if (tty.get() < 0) {
    throw usage_error(
        "no passphrase given and no terminal to ask on (use --passphrase-file or --passphrase-env)");
  }
  const EchoOff echo_off(tty.get());
  SecretBytes passphrase = prompt(tty.get(), "Passphrase: ");
  if (passphrase.empty()) throw Error("empty passphrase");
  if (confirm && !same_bytes(passphrase, prompt(tty.get(), "Repeat passphrase: "))) {
    throw Error("passphrases do not match");
  }
  return passphrase;
}

}  // namespace paes::cli
