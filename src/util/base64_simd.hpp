// The vector code of base64_lines.cpp (base64_simd.cpp): whole lines of
// armor, as encode_base64_lines and decode_base64_lines describe them, on
// x86-64's AVX2 and AVX-512 VBMI. Each is called only where the CPU runs it
// (runnable_base64_codes); where it isn't built (another architecture), the
// scalar code runs instead.
#pragma once

#include <cstddef>
#include <cstdint>

namespace paes {

#if defined(__x86_64__)
inline constexpr bool kBase64SimdBuilt = true;
#else
inline constexpr bool kBase64SimdBuilt = false;
#endif

// Whether the 64 characters at `text` are followed by their line's end: '\n'
// where lines are `line_len` 65 bytes long, "\r\n" where 66.
inline bool base64_line_ends(const std::uint8_t* text, std::size_t line_len) {
  return line_len == 65 ? text[64] == '\n' : text[64] == '\r' && text[65] == '\n';
}

// `line_len`: 65 or 66 bytes a line, as base64_line_ends.
void encode_base64_lines_avx2(std::uint8_t* out, const std::uint8_t* in, std::size_t lines);
std::size_t decode_base64_lines_avx2(std::uint8_t* out, const std::uint8_t* text, std::size_t lines,
                                     std::size_t line_len);
void encode_base64_lines_avx512vbmi(std::uint8_t* out, const std::uint8_t* in, std::size_t lines);
std::size_t decode_base64_lines_avx512vbmi(std::uint8_t* out, const std::uint8_t* text, std::size_t lines,
                                           std::size_t line_len);

}  // namespace paes
