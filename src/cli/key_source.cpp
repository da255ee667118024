#include "cli/key_source.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>

#include "cli/passphrase.hpp"
#include "cli/say.hpp"
#include "cli/terminal_ui.hpp"
#include "paes/age_keys.hpp"
#include "paes/error.hpp"
#include "paes/sealed.hpp"
#include "util/hex.hpp"

namespace paes::cli {
namespace {

// A key file is small; anything bigger is a mistake (a data file given as key).
constexpr std::size_t kMaxKeyFileLen = 4096;

constexpr const char* kKeyFileForms =
    "a key file holds 32, 48 or 64 hex digits, as 'paes keygen' writes, or 16, 24 or 32 raw bytes";

// Printable ASCII and the whitespace an editor or echo leaves: what a typed
// hex key, a passphrase or a note is made of.
bool text_byte(std::uint8_t b) {
  return (b >= 0x20 && b < 0x7f) || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f';
}

// What random key bytes almost never are ((100/256)^16 < 3e-7 for the
// shortest key).
bool looks_like_text(std::span<const std::uint8_t> bytes) { return std::all_of(bytes.begin(), bytes.end(), text_byte); }

// Well-formed UTF-8 (RFC 3629: shortest forms, no surrogates, nothing above
// U+10FFFF) of text bytes and of characters from U+00A0 up, so no control
// character but whitespace: a passphrase typed in any language. Random bytes
// form such text with at least one non-ASCII character with probability
// about 4.5e-6 for 16 bytes, 1.1e-8 for 24 and 2.8e-11 for 32 (by the
// recurrence over the 100 text bytes and the 1,888, 61,440 and 1,048,576
// allowed sequences of 2, 3 and 4 bytes); such a key is refused with the way
// out that text gets, never misread.
bool looks_like_utf8_text(std::span<const std::uint8_t> bytes) {
  std::size_t i = 0;
  while (i < bytes.size()) {
    const std::uint8_t lead = bytes[i];
    if (lead < 0x80) {
      if (!text_byte(lead)) return false;
      ++i;
      continue;
    }
    // The sequence's length and the range of its second byte, which rules
    // out overlong forms, surrogates, C1 controls (U+0080 to U+009F) and code
    // points past U+10FFFF at once.
    std::size_t len = 4;
    std::uint8_t low = 0x80;
    std::uint8_t high = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) {
      len = 2;
      if (lead == 0xc2) low = 0xa0;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      len = 3;
      if (lead == 0xe0) low = 0xa0;
      if (lead == 0xed) high = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      if (lead == 0xf0) low = 0x90;
      if (lead == 0xf4) high = 0x8f;
    } else {
      return false;
    }
    if (bytes.size() - i < len || bytes[i + 1] < low || bytes[i + 1] > high) return false;
    for (std::size_t k = 2; k < len; ++k) {
      if (bytes[i + k] < 0x80 || bytes[i + k] > 0xbf) return false;
    }
    i += len;
  }
  return true;
}

// Whether `bytes` start with what some editors put before UTF-8 text.
bool starts_with_byte_order_mark(std::span<const std::uint8_t> bytes) {
  constexpr std::array<std::uint8_t, 3> kMark{0xef, 0xbb, 0xbf};
  return bytes.size() >= kMark.size() && std::equal(kMark.begin(), kMark.end(), bytes.begin());
}

}  // namespace

SecretBytes decode_key_file(const SecretBytes& content, const std::string& path) {
  const std::string name = secret_file_name("key file", "--key-file", path);
  if (content.empty()) throw usage_error(name + " is empty (" + kKeyFileForms + ")");
  // Refused rather than skipped: the other tools that read a key file
  // ($(cat KEY) for openssl -K, xxd -r -p, Tink's loaders) take the mark for
  // part of the key and fail on it or misread it, and a key should be one
  // file that all of them read alike. Only before text, so that the 1 in
  // 2^24 random raw keys that start with these bytes stay keys.
  if (starts_with_byte_order_mark(content.view()) && looks_like_utf8_text(content.view().subspan(3))) {
    throw usage_error(name + " starts with a UTF-8 byte-order mark (bytes EF BB BF, as some editors "
                "write): save it without one (" + kKeyFileForms + "; a passphrase goes in --passphrase-file)");
  }
  std::string_view text(reinterpret_cast<const char*>(content.data()), content.size());
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  const bool hex_length = text.size() == 32 || text.size() == 48 || text.size() == 64;
  const bool ascii_text = looks_like_text(content.view());
  // Text that is not a hex key is never taken as raw key bytes: a mistyped
  // hex key or a short passphrase file would otherwise become an AES key as
  // it is, with no KDF, and encrypt "successfully" under a guessable key.
  const auto not_a_key = [&](const std::string& kind) {
    return usage_error(name + " is " + kind + " but not a hex key" +
                 (ascii_text && hex_length ? ": its " + std::to_string(text.size()) +
                                                 " characters are not all hex digits"
                                           : "") +
                 " (" + kKeyFileForms + "). A passphrase goes in --passphrase-file; raw key bytes that happen "
                 "to read as text must be given as hex: xxd -p -c 64 " + path);
  };
  if (text.find("AGE-SECRET-KEY-1") != std::string_view::npos) {
    throw usage_error(name + " is an age identity ('paes keygen --x25519', age-keygen): give it with -i");
  }
  if (hex_length) {
    if (auto key = decode_hex(text)) return std::move(*key);
  }
  // Text is never raw key bytes, whatever its length: said as such, not as
  // a byte count that includes its newline.
  if (ascii_text) {
    if (text.empty()) throw usage_error(name + " holds only whitespace (" + kKeyFileForms + ")");
    const bool all_hex = std::all_of(text.begin(), text.end(), [](char c) {
      return std::isxdigit(static_cast<unsigned char>(c)) != 0;
    });
    if (all_hex) {
      throw usage_error(name + " holds " + std::to_string(text.size()) +
                  " hex digits; a key has 32, 48 or 64 (AES-128, -192, -256), as 'paes keygen' writes "
                  "(a passphrase goes in --passphrase-file)");
    }
    throw not_a_key("text");
  }
  if (looks_like_utf8_text(content.view())) throw not_a_key("UTF-8 text");
  try {
    check_key_length(content.size());
  } catch (const Error& e) {
    throw usage_error(name + ": " + e.what() + " (" + kKeyFileForms + ")");
  }
  return content.clone();
}

SecretBytes load_key(const KeySources& sources) {
  if (!sources.key_file.empty()) {
    return decode_key_file(read_secret_file(sources.key_file, kMaxKeyFileLen,
                                            secret_file_name("key file", "--key-file", sources.key_file),
                                            "a key is not typed: give a file or a pipe"),
                           sources.key_file);
  }
  if (!sources.key_env.empty()) {
    const char* value = secret_from_env(sources.key_env, "--key-env");
    auto key = decode_hex(value);
    if (!key) throw usage_error("environment variable " + sources.key_env + " does not hold a hex key");
    try {
      check_key_length(key->size());
    } catch (const Error& e) {
      throw usage_error("environment variable " + sources.key_env + ": " + e.what());
    }
    return std::move(*key);
  }
  say("paes: warning: a key given with --key-hex is visible to other users of this "
      "machine (ps, /proc); prefer --key-file or --key-env\n");
  auto key = decode_hex(sources.key_hex);
  if (!key) throw usage_error("--key-hex is not hex (expected 32, 48 or 64 hex digits)");
  check_key_length(key->size());
  return std::move(*key);
}

SecretBytes load_passphrase(const KeySources& sources, bool confirm, PassphraseFileRule file_rule) {
  if (!sources.passphrase_file.empty()) return passphrase_from_file(sources.passphrase_file, file_rule);
  if (!sources.passphrase_env.empty()) return passphrase_from_env(sources.passphrase_env);
  return passphrase_from_terminal(confirm);
}

namespace {

// A recipients file, or standard input for "-" (as age reads it; the caller
// made sure stdin isn't also the data), read to at most the bound and one
// byte, so that /dev/zero or a wrong, huge file ends at once.
std::vector<std::uint8_t> read_recipients_text(const std::string& path, const std::string& name) {
  int fd = STDIN_FILENO;
  if (path != "-") {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) throw system_error("can't read " + name);
  }
  std::vector<std::uint8_t> text(kMaxRecipientsFileLen + 1);
  std::size_t len = 0;
  int read_errno = 0;
  while (len < text.size()) {
    const ssize_t n = ::read(fd, text.data() + len, text.size() - len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) read_errno = errno;
    if (n <= 0) break;
    len += static_cast<std::size_t>(n);
  }
  if (fd != STDIN_FILENO) ::close(fd);
  if (read_errno != 0) throw Error("can't read " + name + ": " + std::strerror(read_errno));
  text.resize(len);
  return text;
}

}  // namespace

std::vector<Recipient> load_recipients(const std::vector<std::string>& recipients,
                                       const std::vector<std::string>& files) {
  std::vector<Recipient> keys;
  for (std::size_t i = 0; i < recipients.size(); ++i) {
    std::string_view text = recipients[i];
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
    keys.push_back(parse_recipient(text, "recipient " + std::to_string(i + 1) + " (-r)"));
  }
  for (const std::string& path : files) {
    const std::string name = path == "-" ? "standard input (-R -)" : "recipients file " + path;
    for (Recipient& key : parse_recipients_file(read_recipients_text(path, name), name)) keys.push_back(std::move(key));
  }
  return keys;
}

void refuse_raw_key_as_identity(const SecretBytes& content, const std::string& name) {
  std::string_view text(reinterpret_cast<const char*>(content.data()), content.size());
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  const bool raw_key = looks_like_text(content.view())
                           ? (text.size() == 32 || text.size() == 48 || text.size() == 64) &&
                                 std::all_of(text.begin(), text.end(),
                                             [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; })
                           : content.size() == 16 || content.size() == 24 || content.size() == 32;
  if (raw_key) throw usage_error(name + " holds a raw AES key, not an age identity: give it with --key-file");
}

// NAME.pub beside an ssh key file, where there is one: what a
// passphrase-protected PEM key, which carries no public key, is matched by.
std::optional<std::string> public_key_beside(const std::string& path) {
  if (path == "-") return std::nullopt;
  const std::string pub = path + ".pub";
  const int fd = ::open(pub.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return std::nullopt;
  std::string text(kMaxKeyLineLen + 1, '\0');
  const ssize_t n = ::read(fd, text.data(), text.size());
  ::close(fd);
  if (n <= 0) return std::nullopt;
  text.resize(static_cast<std::size_t>(n));
  return text;
}

namespace {

// An identity file encrypted with `age -p` (age's own way to keep one
// safe): opened with its passphrase, asked for on the terminal as age asks.
SecretBytes open_encrypted_identity_file(const SecretBytes& file, const std::string& name) {
  std::optional<SecretBytes> passphrase = terminal_ui().request_secret(name, "passphrase of this identity file:");
  if (!passphrase) {
    throw Error(name + " is encrypted with a passphrase (age -p), and there is no terminal to ask for it on");
  }
  SealedSpec spec;
  spec.direction = Direction::decrypt;
  spec.passphrase = std::move(*passphrase);
  return open_age_bytes(spec, file.view(), name);
}

}  // namespace

std::vector<Identity> load_identities(const std::vector<std::string>& paths) {
  std::vector<Identity> identities;
  for (const std::string& path : paths) {
    const std::string name = secret_file_name("identity file", "-i", path);
    SecretBytes text = read_secret_file(path, kMaxIdentityFileLen, name,
                                        "an identity is not typed: give a file or a pipe", looks_like_age_file);
    if (looks_like_age_file(text.view())) text = open_encrypted_identity_file(text, name);
    refuse_raw_key_as_identity(text, name);
    for (Identity& key : parse_identity_file(text, name, public_key_beside(path))) {
      identities.push_back(std::move(key));
    }
  }
  return identities;
}

Block parse_iv(Mode mode, const std::string& iv_hex) {
  Block iv{};
  if (!mode_uses_iv(mode)) {
    if (!iv_hex.empty()) throw usage_error("ECB takes no IV: drop --iv");
    return iv;
  }
  if (iv_hex.empty()) {
    throw usage_error("--iv is required for " + std::string(mode_name(mode)) +
                      " (16 bytes as 32 hex digits)");
  }
  const bool all_hex = std::all_of(iv_hex.begin(), iv_hex.end(),
                                   [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
  if (!all_hex) throw usage_error("--iv is not hex (expected 32 hex digits)");
  if (iv_hex.size() != 2 * kBlockLen) {
    throw usage_error("IV must be 16 bytes (32 hex digits), got " + std::to_string(iv_hex.size()) + " hex digits");
  }
  const auto bytes = decode_hex(iv_hex);
  std::memcpy(iv.data(), bytes->data(), kBlockLen);
  return iv;
}

namespace {

// Room for any associated data people pass around, while a wrong name
// (/dev/zero, a disk image) fails at once instead of filling memory.
constexpr std::size_t kMaxAadFileLen = std::size_t{16} << 20;

// --aad-file's bytes; "-" is standard input (refuse_reading_standard_input_twice
// made sure it is not also the data).
std::vector<std::uint8_t> read_aad_file(const std::string& path) {
  const bool from_stdin = path == "-";
  const std::string what = from_stdin ? "standard input (--aad-file -)" : "associated data file " + path;
  std::ifstream file;
  if (!from_stdin) {
    file.open(path, std::ios::binary);
    if (!file) throw system_error("can't read " + what);
  }
  std::istream& in = from_stdin ? std::cin : file;
  std::vector<std::uint8_t> bytes;
  std::array<char, 64 * 1024> buffer;
  while (in.read(buffer.data(), buffer.size()) || in.gcount() > 0) {
    bytes.insert(bytes.end(), buffer.begin(), buffer.begin() + in.gcount());
    if (bytes.size() > kMaxAadFileLen) {
      throw Error(what + " is larger than 16 MiB, the most paes takes as associated data");
    }
  }
  if (in.bad()) throw system_error("can't read " + what);
  return bytes;
}

}  // namespace

void add_associated_data_options(CLI::App& cmd, std::string& aad, std::string& aad_file) {
  CLI::Option* text = cmd.add_option("--aad", aad, "Sealed: associated data, authenticated but not stored")
                          ->type_name("TEXT");
  cmd.add_option("--aad-file", aad_file,
                 "Sealed: associated data from a file, its bytes as they are, at most 16 MiB (command lines "
                 "hold less); '-': standard input (the input must then be a file)")
      ->type_name("PATH")
      ->excludes(text);
}

std::vector<std::uint8_t> load_associated_data(const std::string& aad, const std::string& aad_file) {
  if (aad_file.empty()) return {aad.begin(), aad.end()};
  return read_aad_file(aad_file);
}

}  // namespace paes::cli
