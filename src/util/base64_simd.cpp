// Whole lines of armor's base64 on x86-64's vector units: Wojciech Muła and
// Daniel Lemire's algorithms ("Faster Base64 Encoding and Decoding Using AVX2
// Instructions", ACM TOW 2018; "Base64 encoding and decoding at almost the
// speed of a memory copy", SPE 2019). A line of 48 bytes is two AVX2 blocks
// of 24 bytes or one AVX-512 register; every load and store stays within the
// line's 48 bytes and 65 characters, so a line at the very end of a buffer is
// read and written like any other. Each function carries its own target
// attribute: no file is built for a CPU the machine may lack, and
// base64_lines.cpp calls each only where the CPU runs it.
#include "util/base64_simd.hpp"

#if defined(__x86_64__)

#include <immintrin.h>

#include <array>
#include <string_view>

#include "util/base64_lines.hpp"

namespace paes {
namespace {

constexpr std::string_view kSimdAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// --- AVX2: 24 bytes <-> 32 characters, each 128-bit lane 12 <-> 16.

// The lanes of one block: the first from `in` (its bytes 0-11 are used), the
// second from `in` + 8 (its bytes 4-15), so that both loads stay within the
// block's 24 bytes.
__attribute__((target("avx2"))) inline __m256i load_block_avx2(const std::uint8_t* in) {
  const __m128i low = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
  const __m128i high = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 8));
  return _mm256_inserti128_si256(_mm256_castsi128_si256(low), high, 1);
}

// 24 bytes to the 32 6-bit values of their characters, each group's 3 bytes
// spread over a 32-bit word as b1 b0 b2 b1, then cut out with multiplies.
__attribute__((target("avx2"))) inline __m256i values_avx2(__m256i block) {
  const __m256i spread = _mm256_shuffle_epi8(
      block, _mm256_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10,  //
                              5, 4, 6, 5, 8, 7, 9, 8, 11, 10, 12, 11, 14, 13, 15, 14));
  const __m256i first_third = _mm256_mulhi_epu16(_mm256_and_si256(spread, _mm256_set1_epi32(0x0fc0fc00)),
                                                 _mm256_set1_epi32(0x04000040));
  const __m256i second_fourth = _mm256_mullo_epi16(_mm256_and_si256(spread, _mm256_set1_epi32(0x003f03f0)),
                                                   _mm256_set1_epi32(0x01000010));
  return _mm256_or_si256(first_third, second_fourth);
}

// 6-bit values to characters: the offset to add, looked up by range.
__attribute__((target("avx2"))) inline __m256i characters_avx2(__m256i values) {
  const __m256i offsets = _mm256_setr_epi8(65, 71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -19, -16, 0, 0,  //
                                           65, 71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -19, -16, 0, 0);
  // 0 for A-Z (values 0-25), 1 for a-z, 2-11 for the digits, 12 for '+', 13 for '/'.
  __m256i range = _mm256_subs_epu8(values, _mm256_set1_epi8(51));
  range = _mm256_sub_epi8(range, _mm256_cmpgt_epi8(values, _mm256_set1_epi8(25)));
  return _mm256_add_epi8(values, _mm256_shuffle_epi8(offsets, range));
}

// 32 characters to their 6-bit values; `bad` gains a bit where one is not in
// the alphabet (a table by the low nibble and one by the high nibble share a
// bit exactly for such characters).
__attribute__((target("avx2"))) inline __m256i values_of_characters_avx2(__m256i text, __m256i& bad) {
  const __m256i by_low = _mm256_setr_epi8(0x15, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x13, 0x1a,
                                          0x1b, 0x1b, 0x1b, 0x1a,  //
                                          0x15, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x13, 0x1a,
                                          0x1b, 0x1b, 0x1b, 0x1a);
  const __m256i by_high = _mm256_setr_epi8(0x10, 0x10, 0x01, 0x02, 0x04, 0x08, 0x04, 0x08, 0x10, 0x10, 0x10, 0x10,
                                           0x10, 0x10, 0x10, 0x10,  //
                                           0x10, 0x10, 0x01, 0x02, 0x04, 0x08, 0x04, 0x08, 0x10, 0x10, 0x10, 0x10,
                                           0x10, 0x10, 0x10, 0x10);
  const __m256i shifts = _mm256_setr_epi8(0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0,  //
                                          0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m256i slash = _mm256_set1_epi8(0x2f);
  // 0x2f keeps a byte's nibble (pshufb reads 4 bits) and drops bit 7, which
  // would make pshufb give 0.
  const __m256i high = _mm256_and_si256(_mm256_srli_epi32(text, 4), slash);
  const __m256i low_class = _mm256_shuffle_epi8(by_low, _mm256_and_si256(text, slash));
  const __m256i high_class = _mm256_shuffle_epi8(by_high, high);
  bad = _mm256_or_si256(bad, _mm256_and_si256(low_class, high_class));
  // '/' shares its high nibble with '+' and needs another shift: one less index.
  const __m256i shift = _mm256_shuffle_epi8(shifts, _mm256_add_epi8(_mm256_cmpeq_epi8(text, slash), high));
  return _mm256_add_epi8(text, shift);
}

// 32 6-bit values to 24 bytes, stored exactly.
__attribute__((target("avx2"))) inline void store_bytes_avx2(std::uint8_t* out, __m256i values) {
  const __m256i pairs = _mm256_maddubs_epi16(values, _mm256_set1_epi32(0x01400140));
  const __m256i words = _mm256_madd_epi16(pairs, _mm256_set1_epi32(0x00011000));
  const __m256i packed = _mm256_shuffle_epi8(
      words, _mm256_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1,  //
                              2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1));
  const __m256i together = _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(together));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out + 16), _mm256_extracti128_si256(together, 1));
}

// --- AVX-512 VBMI: a line's 48 bytes <-> its 64 characters in one register.

constexpr __mmask64 kSimdLineMask = (__mmask64{1} << kBase64LineBytes) - 1;

// The values of characters 0x00-0x3f and 0x40-0x7f (0x80: not in the alphabet).
constexpr std::array<std::array<std::uint8_t, 64>, 2> value_tables() {
  std::array<std::array<std::uint8_t, 64>, 2> tables{};
  for (auto& table : tables) {
    for (auto& value : table) value = 0x80;
  }
  for (std::size_t i = 0; i < kSimdAlphabet.size(); ++i) {
    const auto c = static_cast<unsigned char>(kSimdAlphabet[i]);
    tables[c >> 6][c & 63] = static_cast<std::uint8_t>(i);
  }
  return tables;
}
constexpr auto kValueTables = value_tables();

// For byte j of 48, where it comes from in the packed words: word j / 3,
// most significant byte first.
constexpr std::array<std::uint8_t, 64> packing_table() {
  std::array<std::uint8_t, 64> table{};
  for (std::size_t j = 0; j < kBase64LineBytes; ++j) table[j] = static_cast<std::uint8_t>(4 * (j / 3) + 2 - j % 3);
  return table;
}
constexpr auto kPacking = packing_table();

// For each group's 32-bit word, its 3 bytes as b1 b0 b2 b1 (as in AVX2's).
constexpr std::array<std::uint8_t, 64> spreading_table() {
  std::array<std::uint8_t, 64> table{};
  for (std::size_t group = 0; group < 16; ++group) {
    const auto at = static_cast<std::uint8_t>(3 * group);
    table[4 * group + 0] = static_cast<std::uint8_t>(at + 1);
    table[4 * group + 1] = at;
    table[4 * group + 2] = static_cast<std::uint8_t>(at + 2);
    table[4 * group + 3] = static_cast<std::uint8_t>(at + 1);
  }
  return table;
}
constexpr auto kSpreading = spreading_table();

#define PAES_AVX512VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))

PAES_AVX512VBMI inline __m512i load_table(const std::array<std::uint8_t, 64>& table) {
  return _mm512_loadu_si512(table.data());
}

// vpermb and vpmultishiftqb through their zero-masking forms, under a mask of
// every byte: GCC 12's unmasked forms start from _mm512_undefined_epi32(),
// which its -Wmaybe-uninitialized takes for a read of an uninitialised value.
constexpr __mmask64 kEveryByte = ~__mmask64{0};

PAES_AVX512VBMI inline __m512i permute_bytes(__m512i indices, __m512i table) {
  return _mm512_maskz_permutexvar_epi8(kEveryByte, indices, table);
}

PAES_AVX512VBMI inline __m512i multishift(__m512i cuts, __m512i words) {
  return _mm512_maskz_multishift_epi64_epi8(kEveryByte, cuts, words);
}

}  // namespace

__attribute__((target("avx2"))) void encode_base64_lines_avx2(std::uint8_t* out, const std::uint8_t* in,
                                                              std::size_t lines) {
  for (std::size_t line = 0; line < lines; ++line) {
    const __m256i first = characters_avx2(values_avx2(load_block_avx2(in)));
    const __m256i second = characters_avx2(values_avx2(load_block_avx2(in + 24)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), first);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 32), second);
    out[kBase64LineChars] = '\n';
    in += kBase64LineBytes;
    out += kBase64LineLen;
  }
}

namespace {

// Lines of `kLineLen` bytes: the stride a constant, so that the loop is as
// tight for CRLF lines as for LF ones.
template <std::size_t kLineLen>
__attribute__((target("avx2"))) std::size_t decode_lines_avx2(std::uint8_t* out, const std::uint8_t* text,
                                                              std::size_t lines) {
  for (std::size_t line = 0; line < lines; ++line) {
    __m256i bad = _mm256_setzero_si256();
    const __m256i first = values_of_characters_avx2(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(text)), bad);
    const __m256i second =
        values_of_characters_avx2(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(text + 32)), bad);
    if (!_mm256_testz_si256(bad, bad) || !base64_line_ends(text, kLineLen)) return line;
    store_bytes_avx2(out, first);
    store_bytes_avx2(out + 24, second);
    text += kLineLen;
    out += kBase64LineBytes;
  }
  return lines;
}

}  // namespace

std::size_t decode_base64_lines_avx2(std::uint8_t* out, const std::uint8_t* text, std::size_t lines,
                                     std::size_t line_len) {
  return line_len == kBase64LineLen ? decode_lines_avx2<kBase64LineLen>(out, text, lines)
                                    : decode_lines_avx2<kBase64LineLen + 1>(out, text, lines);
}

PAES_AVX512VBMI void encode_base64_lines_avx512vbmi(std::uint8_t* out, const std::uint8_t* in, std::size_t lines) {
  const __m512i spreading = load_table(kSpreading);
  // Each byte of a word takes the 8 bits at these offsets; vpermb reads the low 6.
  const __m512i cuts = _mm512_set1_epi64(0x3036242a1016040a);
  const __m512i alphabet = _mm512_loadu_si512(kSimdAlphabet.data());
  for (std::size_t line = 0; line < lines; ++line) {
    const __m512i bytes = _mm512_maskz_loadu_epi8(kSimdLineMask, in);
    const __m512i values = multishift(cuts, permute_bytes(spreading, bytes));
    _mm512_storeu_si512(out, permute_bytes(values, alphabet));
    out[kBase64LineChars] = '\n';
    in += kBase64LineBytes;
    out += kBase64LineLen;
  }
}

namespace {

template <std::size_t kLineLen>
PAES_AVX512VBMI std::size_t decode_lines_avx512vbmi(std::uint8_t* out, const std::uint8_t* text, std::size_t lines) {
  const __m512i low_values = load_table(kValueTables[0]);
  const __m512i high_values = load_table(kValueTables[1]);
  const __m512i packing = load_table(kPacking);
  for (std::size_t line = 0; line < lines; ++line) {
    const __m512i chars = _mm512_loadu_si512(text);
    // Bit 6 of a character picks the table, its low 6 bits the entry; a
    // character with bit 7, or one the table marks, is not in the alphabet.
    const __m512i values = _mm512_permutex2var_epi8(low_values, chars, high_values);
    if (_mm512_movepi8_mask(_mm512_or_si512(values, chars)) != 0 || !base64_line_ends(text, kLineLen)) return line;
    const __m512i pairs = _mm512_maddubs_epi16(values, _mm512_set1_epi32(0x01400140));
    const __m512i words = _mm512_madd_epi16(pairs, _mm512_set1_epi32(0x00011000));
    _mm512_mask_storeu_epi8(out, kSimdLineMask, permute_bytes(packing, words));
    text += kLineLen;
    out += kBase64LineBytes;
  }
  return lines;
}

}  // namespace

std::size_t decode_base64_lines_avx512vbmi(std::uint8_t* out, const std::uint8_t* text, std::size_t lines,
                                           std::size_t line_len) {
  return line_len == kBase64LineLen ? decode_lines_avx512vbmi<kBase64LineLen>(out, text, lines)
                                    : decode_lines_avx512vbmi<kBase64LineLen + 1>(out, text, lines);
}

}  // namespace paes

#else

#include "util/base64_lines.hpp"

namespace paes {

// Never called (runnable_base64_codes offers no vector code here); defined
// so that the choice in base64_lines.cpp links on every architecture.
void encode_base64_lines_avx2(std::uint8_t* out, const std::uint8_t* in, std::size_t lines) {
  encode_base64_lines(out, in, lines, Base64Code::scalar);
}
std::size_t decode_base64_lines_avx2(std::uint8_t* out, const std::uint8_t* text, std::size_t lines,
                                     std::size_t line_len) {
  return decode_base64_lines(out, text, lines, line_len == 65 ? Base64LineEnd::lf : Base64LineEnd::crlf,
                             Base64Code::scalar);
}
void encode_base64_lines_avx512vbmi(std::uint8_t* out, const std::uint8_t* in, std::size_t lines) {
  encode_base64_lines(out, in, lines, Base64Code::scalar);
}
std::size_t decode_base64_lines_avx512vbmi(std::uint8_t* out, const std::uint8_t* text, std::size_t lines,
                                           std::size_t line_len) {
  return decode_base64_lines(out, text, lines, line_len == 65 ? Base64LineEnd::lf : Base64LineEnd::crlf,
                             Base64Code::scalar);
}

}  // namespace paes

#endif
