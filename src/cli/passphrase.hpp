// Where a passphrase comes from on the command line: a file, an environment
// variable, or a prompt on the controlling terminal. Passphrases live only in
// SecretBytes, and no error message ever contains one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "paes/secret.hpp"

namespace paes::cli {

// A passphrase file is small; anything bigger is a mistake (a data file given
// as the passphrase file).
inline constexpr std::size_t kMaxPassphraseFileLen = 64 * 1024;

// The longest passphrase accepted from the terminal.
inline constexpr std::size_t kMaxTerminalPassphraseLen = 4096;

// The length of the first line of `text`: everything before the first '\n',
// less a '\r' just before it, so "\n" and "\r\n" endings both go. Text
// without a '\n' is one line, kept whole.
std::size_t first_line_length(std::span<const std::uint8_t> text);

// How a passphrase file's content becomes the passphrase.
enum class PassphraseFileRule {
  // paes' own, for the sealed format: first_line_length.
  first_line,
  // openssl enc -pass file:'s, for --pbkdf2 (Salted__ files, which openssl
  // must read with the same key): openssl_passphrase_length.
  openssl,
};

// The longest passphrase openssl enc takes from -pass file: (its buffer of
// APP_PASS_LEN 1024 bytes, less the terminating NUL).
inline constexpr std::size_t kOpensslMaxFilePassphraseLen = 1023;

// The length of the passphrase `openssl enc -pass file:` takes from `text`,
// as OpenSSL 3's app_get_pass does: fgets reads at most 1023 bytes up to and
// including the first '\n', only that '\n' is dropped (a '\r' before it
// stays), and the passphrase is a C string, so it ends at a NUL byte.
std::size_t openssl_passphrase_length(std::span<const std::uint8_t> text);

// The passphrase in the file at `path` ("-": standard input), by `rule`. With the openssl rule,
// warns (never quoting it) where it differs from the first line: a '\r' kept,
// a first line cut at 1023 bytes or at a NUL. Throws Error when the file
// can't be read, is larger than kMaxPassphraseFileLen, or the passphrase is
// empty.
SecretBytes passphrase_from_file(const std::string& path,
                                 PassphraseFileRule rule = PassphraseFileRule::first_line);

// How messages name the secret file `path` given to `option`: "standard
// input (OPTION -)" for "-", else `noun` and the path ("key file K").
std::string secret_file_name(const std::string& noun, const std::string& option, const std::string& path);

// The whole content of a small file holding a secret (a key, a passphrase, an
// identity), read straight into wiped memory; "-" is standard input (the
// caller made sure it isn't also the data). Warns on stderr, never quoting it,
// when the file is a regular file that group or others can read or write, or
// that another user than the caller or root owns. Throws a usage Error when it
// is a terminal (a secret typed there would show; `terminal_hint` says what
// to do instead), and Error naming `what` when it can't be read or holds more
// than max_len bytes. A file whose content `sealed` says is encrypted (an
// identity file under `age -p`) is no secret as it lies: no warning.
SecretBytes read_secret_file(const std::string& path, std::size_t max_len, const std::string& what,
                             const std::string& terminal_hint = "give a file or a pipe",
                             bool (*sealed)(std::span<const std::uint8_t>) = nullptr);

// The warning read_secret_file gives for an exposed file, for the open `fd`
// named `what` (also an output that receives a secret).
void warn_if_exposed(int fd, const std::string& what);

// A file a run reads a secret from (a key, passphrase or identity file) or
// whose loss would cost as much (a recipients file), and the option that
// named it, for messages.
struct SecretFile {
  std::string option;
  std::string path;
};

// Refuses (a usage Error) an output that is one of `secrets`: written there,
// the output replaces the key or identity it was sealed under, and both are
// lost. `output` is a path, or "" or "-" for standard output (`>> KEY`); a
// secret's path "-" is the file standard input was redirected from. Files
// are compared by identity (device and inode, after symbolic links), so a
// link of any kind is caught; an output or secret that does not exist yet,
// or is no regular file, is none of them. Call before any secret is read.
void refuse_output_over_secrets(const std::string& output, const std::vector<SecretFile>& secrets);

// Standard input read for a secret (a key, passphrase, identity or
// recipients file) or --aad-file is used up: refuses (a usage Error) two of
// `readers` that read it ("-", /dev/stdin, /dev/fd/0), and one when `input`,
// the data of the `job` ("encrypt"), is standard input too ("" or "-" as
// well). (`paes encrypt --key-file /dev/stdin` took all of stdin for the key,
// then encrypted nothing, with exit 0.)
void refuse_reading_standard_input_twice(const std::vector<SecretFile>& readers, const std::string& input,
                                         std::string_view job);

// The value of the environment variable `var`, named by `option`
// (--key-env, --passphrase-env). Throws Error when it is unset, without
// quoting `var`: a key or passphrase pasted where its variable's name
// belongs would be printed.
const char* secret_from_env(const std::string& var, const char* option);

// The value of the environment variable `var`. Throws Error when it is unset
// or empty.
SecretBytes passphrase_from_env(const std::string& var);

// Asks on the controlling terminal (/dev/tty, so stdin and stdout stay free
// for data) with echo off, twice when `confirm` is set. Echo is restored on
// every way out, SIGINT, SIGTERM, SIGHUP and SIGQUIT included. Throws a usage
// Error when there is no terminal, and Error for an empty, too long or (with
// `confirm`) mismatched passphrase. Not for concurrent use from several threads.
SecretBytes passphrase_from_terminal(bool confirm);

// Asks `question` on the controlling terminal and reads one line, with echo
// off unless `echo` (restored as above). Nothing when there is no terminal.
// Throws Error for a line longer than a passphrase may be.
std::optional<SecretBytes> ask_on_terminal(std::string_view question, bool echo);

}  // namespace paes::cli
