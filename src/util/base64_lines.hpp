// Base64 in armor's lines, fast: each 48 bytes are one line of 64 characters
// of RFC 4648's alphabet and '\n', the lines openssl enc -a, PEM and age's
// armor write. Armor (util/armor.cpp, io/armored_file.cpp) spends most of its
// time here, so the bulk of whole lines runs on the widest vector code this
// CPU has (Muła and Lemire's algorithms: AVX2, AVX-512 VBMI), chosen once;
// the scalar code is table driven and is what a CPU without them runs. Every
// code gives the same bytes and refuses the same text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace paes {

// Bytes on one line of armor and its characters, with the '\n' after them.
inline constexpr std::size_t kBase64LineBytes = 48;
inline constexpr std::size_t kBase64LineChars = 64;
inline constexpr std::size_t kBase64LineLen = kBase64LineChars + 1;

// The code that runs the bulk of whole lines.
enum class Base64Code { scalar, avx2, avx512vbmi };

std::string_view base64_code_name(Base64Code code);
// The fastest code this CPU and its OS run, chosen once.
Base64Code best_base64_code();
// Every code this CPU runs, scalar first (the tests run each).
std::vector<Base64Code> runnable_base64_codes();

// Writes `lines` lines to `out` (lines x 65 bytes): each 48 bytes of `in` as
// 64 characters and '\n'. `code` must be runnable here.
void encode_base64_lines(std::uint8_t* out, const std::uint8_t* in, std::size_t lines,
                         Base64Code code = best_base64_code());

// How lines of armor end: '\n', or "\r\n" where a text channel made them so.
enum class Base64LineEnd { lf, crlf };
inline constexpr std::size_t base64_line_len(Base64LineEnd end) {
  return end == Base64LineEnd::lf ? kBase64LineLen : kBase64LineLen + 1;
}

// Decodes `lines` lines of `text` (lines x base64_line_len(end) bytes), each
// 64 characters of the alphabet ('=' is not one) and `end`, into 48 bytes
// each. Returns how many lines came before the first that is not such a line
// (`lines` when all are); `out` holds the bytes of those, and what the rest
// wrote is undefined. `code` must be runnable here.
std::size_t decode_base64_lines(std::uint8_t* out, const std::uint8_t* text, std::size_t lines,
                                Base64LineEnd end = Base64LineEnd::lf, Base64Code code = best_base64_code());

// Writes the 4 characters of each 3 bytes of `in` (groups x 3 bytes) to
// `out`, with no '\n': the pieces of a line that a chunk's edges cut.
void encode_base64_groups(std::uint8_t* out, const std::uint8_t* in, std::size_t groups);

// Writes base64 of `in` (at most a line) as EVP_EncodeBlock does: 4
// characters for each 3 bytes, the last group padded with '='. Returns the
// characters written, (in.size() + 2) / 3 * 4 of them.
std::size_t encode_base64_block(std::uint8_t* out, std::span<const std::uint8_t> in);

// What keeps a line from being armor's base64 (decode_base64_line).
enum class Base64LineFault {
  none,
  not_groups,     // empty, longer than 64 characters, or not whole groups of 4
  not_base64,     // a character outside the alphabet, or '=' elsewhere than closing the last group
  not_canonical,  // a padded group's unused bits are not zero
};

// Decodes one line of armor's base64 (its '\n' left off) strictly into
// `out` (room for 48 bytes), its length in `len`: whole groups of 4
// characters of the alphabet, '=' only as the last one or two characters,
// and the unused bits of a padded group zero, so that no other text gives
// these bytes. Anything else is a fault, and `out` and `len` are undefined.
Base64LineFault decode_base64_line(std::uint8_t* out, std::string_view line, std::size_t& len);

}  // namespace paes
