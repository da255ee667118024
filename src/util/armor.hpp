// Armor's text, in order: the same lines as openssl enc -a, and for paes' own
// armor the strict PEM of RFC 7468 that age's armor is (C2SP age.md, "ASCII
// armor"). Whole lines go through util/base64_lines' fast codec; what is
// not a whole 64-column line (the last, CRLF text) line by line; openssl's
// text, once it is not such lines, through OpenSSL's EVP_Decode*, which
// defines what openssl enc -d -a reads.
#pragma once

#include <openssl/types.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "paes/armor.hpp"
#include "util/base64_lines.hpp"

namespace paes {

// The marker lines with their '\n', and without.
inline constexpr std::string_view kArmorBeginLine = "-----BEGIN PAES ENCRYPTED FILE-----\n";
inline constexpr std::string_view kArmorEndLine = "-----END PAES ENCRYPTED FILE-----\n";
inline constexpr std::string_view kAgeArmorBeginLine = "-----BEGIN AGE ENCRYPTED FILE-----\n";
inline constexpr std::string_view kAgeArmorEndLine = "-----END AGE ENCRYPTED FILE-----\n";
inline constexpr std::string_view kArmorBegin = kArmorBeginLine.substr(0, kArmorBeginLine.size() - 1);
inline constexpr std::string_view kArmorEnd = kArmorEndLine.substr(0, kArmorEndLine.size() - 1);
inline constexpr std::string_view kAgeArmorBegin = kAgeArmorBeginLine.substr(0, kAgeArmorBeginLine.size() - 1);
inline constexpr std::string_view kAgeArmorEnd = kAgeArmorEndLine.substr(0, kAgeArmorEndLine.size() - 1);

// The whitespace armor allows around its lines: space, tab, CR and LF.
inline constexpr bool is_armor_whitespace(std::uint8_t c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
// Whitespace allowed before the BEGIN line: age.md lets readers skip some,
// and age skips up to 1024 bytes of it.
inline constexpr std::size_t kMaxArmorLeadingWhitespace = 1024;
// Whether `start`, an input's first bytes, is the start of paes' armor or
// age's: leading whitespace, its BEGIN line, then '\n' or "\r\n". Fewer bytes
// than that are not.
bool starts_with_armor(std::span<const std::uint8_t> start);
// How many of an input's first bytes starts_with_armor needs.
inline constexpr std::size_t kArmorProbeLen = kMaxArmorLeadingWhitespace + kArmorBegin.size() + 2;

// About how much of an armored text gave `decoded` bytes: lines of 64 base64
// characters and '\n' (paes' armor and openssl enc -a alike) carry 48 bytes.
// Exact for those lines' body; CRLF text or other line lengths run longer.
inline constexpr std::uint64_t armor_text_len_of(std::uint64_t decoded) {
  return decoded / kBase64LineBytes * kBase64LineLen + (decoded % kBase64LineBytes * 4 + 2) / 3;
}

// Armor's text at offsets: its lines carry 48 bytes each from the first byte
// on, so the place of every byte in the text is known before the bytes
// before it are (io/armored_file: workers encode and decode their own
// chunks' lines).
//
// The BEGIN line and its '\n' that `armor`'s text starts with (none for
// Armor::openssl), and the END line and its '\n' it ends with.
std::string_view armor_begin_line(Armor armor);
std::string_view armor_end_line(Armor armor);
// The groups of 3 bytes (4 characters) of a line.
inline constexpr std::uint64_t kArmorGroupsPerLine = kBase64LineBytes / 3;
// Where, in the base64 lines, the 4 characters of the group of bytes
// 3 x `group` to 3 x `group` + 2 start: 16 groups a line, each line 65
// characters with its '\n'.
inline constexpr std::uint64_t armor_group_at(std::uint64_t group) {
  return group / kArmorGroupsPerLine * kBase64LineLen + group % kArmorGroupsPerLine * 4;
}
// The length of the base64 lines of `len` bytes, the last one's '\n' included.
inline constexpr std::uint64_t armor_lines_len(std::uint64_t len) {
  return len / kBase64LineBytes * kBase64LineLen +
         (len % kBase64LineBytes == 0 ? 0 : (len % kBase64LineBytes + 2) / 3 * 4 + 1);
}

// Bytes to armor, piece by piece.
class ArmorEncoder {
 public:
  explicit ArmorEncoder(Armor armor);
  ~ArmorEncoder();
  ArmorEncoder(const ArmorEncoder&) = delete;
  ArmorEncoder& operator=(const ArmorEncoder&) = delete;
  // Appends the text of `bytes` to `text` (the BEGIN line before the first):
  // whole lines only; the bytes of a partial line wait for the next call.
  void encode(std::span<const std::uint8_t> bytes, std::vector<std::uint8_t>& text);
  // Appends the last line, and the END line.
  void finish(std::vector<std::uint8_t>& text);

 private:
  void begin(std::vector<std::uint8_t>& text);
  Armor armor_;
  bool begun_ = false;
  std::uint8_t held_[kBase64LineBytes] = {};  // the bytes of a line not yet whole
  std::size_t held_len_ = 0;
};

// Armor to bytes, piece by piece. paes' armor is held to the rules FORMAT.md
// gives (one encoding for each file: a changed line can't decode to the same
// bytes); openssl's is read as openssl enc -d -a reads it.
class ArmorDecoder {
 public:
  // `name` names the input in errors.
  ArmorDecoder(Armor armor, std::string name);
  ~ArmorDecoder();
  ArmorDecoder(const ArmorDecoder&) = delete;
  ArmorDecoder& operator=(const ArmorDecoder&) = delete;
  // Appends the bytes `text` encodes to `bytes`. Throws Error where the text
  // is not armor.
  void decode(std::span<const std::uint8_t> text, std::vector<std::uint8_t>& bytes);
  // At the end of the input: appends what is left, and throws Error where
  // the armor is incomplete (no END line, a cut line).
  void finish(std::vector<std::uint8_t>& bytes);

 private:
  enum class State { begin, body, last_line_seen, end };
  void decode_openssl(std::span<const std::uint8_t> text, std::vector<std::uint8_t>& bytes);
  void evp_decode(std::span<const std::uint8_t> text, std::vector<std::uint8_t>& bytes);
  std::span<const std::uint8_t> whole_lines(std::span<const std::uint8_t> text, std::vector<std::uint8_t>& bytes);
  void paes_line(std::string_view line, std::vector<std::uint8_t>& bytes);
  [[noreturn]] void fail(const std::string& why) const;

  Armor armor_;
  std::string name_;
  // Armor::openssl: OpenSSL's decoder, made once the text is not whole
  // 64-column lines (until then it would have read them just as the fast
  // codec does, and would hold nothing after them).
  EVP_ENCODE_CTX* ctx_ = nullptr;
  State state_ = State::begin;
  std::string_view end_line_;  // PEM: the END line that goes with the BEGIN line read
  std::string line_;  // a line not yet ended (Armor::openssl: while no EVP decoder is made)
  std::uint64_t line_number_ = 0;
  std::size_t leading_whitespace_ = 0;  // PEM: skipped before the BEGIN line
};

}  // namespace paes
