// The scalar code and the choice of code. The scalar code is table driven:
// encoding looks up two characters per 12 bits (one 8 KiB table), decoding
// one 32-bit word per character whose bits fall in place (four 1 KiB
// tables, as modp_b64 does), with a bit that marks a character outside the
// alphabet, ORed over a line and tested once.
#include "util/base64_lines.hpp"

#include <array>

#include "util/base64_simd.hpp"
#include "util/cpu_features.hpp"

namespace paes {
namespace {

constexpr std::string_view kLineAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The two characters of each 12-bit value.
constexpr std::array<std::array<std::uint8_t, 2>, 4096> pair_table() {
  std::array<std::array<std::uint8_t, 2>, 4096> pairs{};
  for (std::size_t v = 0; v < pairs.size(); ++v) {
    pairs[v] = {static_cast<std::uint8_t>(kLineAlphabet[v >> 6]), static_cast<std::uint8_t>(kLineAlphabet[v & 63])};
  }
  return pairs;
}
constexpr auto kPairs = pair_table();

// A character's 6 bits at the place the `position`th of a group's 4
// characters puts them in the group's 24 bits, or kOutside.
constexpr std::uint32_t kOutside = 1u << 24;
constexpr std::array<std::uint32_t, 256> group_decoding_table(unsigned position) {
  std::array<std::uint32_t, 256> table{};
  for (auto& entry : table) entry = kOutside;
  for (std::size_t i = 0; i < kLineAlphabet.size(); ++i) {
    table[static_cast<unsigned char>(kLineAlphabet[i])] = static_cast<std::uint32_t>(i) << (18 - 6 * position);
  }
  return table;
}
constexpr auto kDecode0 = group_decoding_table(0);
constexpr auto kDecode1 = group_decoding_table(1);
constexpr auto kDecode2 = group_decoding_table(2);
constexpr auto kDecode3 = group_decoding_table(3);

inline void encode_group(std::uint8_t* out, const std::uint8_t* in) {
  const std::uint32_t v = (std::uint32_t{in[0]} << 16) | (std::uint32_t{in[1]} << 8) | in[2];
  const auto& high = kPairs[v >> 12];
  const auto& low = kPairs[v & 0xfff];
  out[0] = high[0];
  out[1] = high[1];
  out[2] = low[0];
  out[3] = low[1];
}

// The 24 bits of a group, with kOutside set where a character is not in the alphabet.
inline std::uint32_t decode_group(std::uint8_t* out, const std::uint8_t* text) {
  const std::uint32_t v = kDecode0[text[0]] | kDecode1[text[1]] | kDecode2[text[2]] | kDecode3[text[3]];
  out[0] = static_cast<std::uint8_t>(v >> 16);
  out[1] = static_cast<std::uint8_t>(v >> 8);
  out[2] = static_cast<std::uint8_t>(v);
  return v;
}

void encode_lines_scalar(std::uint8_t* out, const std::uint8_t* in, std::size_t lines) {
  for (std::size_t line = 0; line < lines; ++line) {
    encode_base64_groups(out, in, kBase64LineBytes / 3);
    out[kBase64LineChars] = '\n';
    out += kBase64LineLen;
    in += kBase64LineBytes;
  }
}

template <std::size_t kLineLen>
std::size_t decode_lines_scalar(std::uint8_t* out, const std::uint8_t* text, std::size_t lines) {
  for (std::size_t line = 0; line < lines; ++line) {
    std::uint32_t seen = 0;
    for (std::size_t group = 0; group < kBase64LineChars / 4; ++group) {
      seen |= decode_group(out + 3 * group, text + 4 * group);
    }
    if ((seen & kOutside) != 0 || !base64_line_ends(text, kLineLen)) return line;
    out += kBase64LineBytes;
    text += kLineLen;
  }
  return lines;
}

std::uint8_t value_of(char c) { return static_cast<std::uint8_t>(kDecode3[static_cast<unsigned char>(c)]); }

}  // namespace

std::string_view base64_code_name(Base64Code code) {
  switch (code) {
    case Base64Code::scalar:
      return "scalar";
    case Base64Code::avx2:
      return "avx2";
    case Base64Code::avx512vbmi:
      return "avx512vbmi";
  }
  return "?";
}

std::vector<Base64Code> runnable_base64_codes() {
  std::vector<Base64Code> codes{Base64Code::scalar};
  if constexpr (kBase64SimdBuilt) {
    const CpuFeatures cpu = detect_cpu_features();
    if (cpu.avx2) codes.push_back(Base64Code::avx2);
    if (cpu.avx512f && cpu.avx512bw && cpu.avx512vbmi) codes.push_back(Base64Code::avx512vbmi);
  }
  return codes;
}

Base64Code best_base64_code() {
  static const Base64Code best = runnable_base64_codes().back();
  return best;
}

void encode_base64_lines(std::uint8_t* out, const std::uint8_t* in, std::size_t lines, Base64Code code) {
  switch (code) {
    case Base64Code::avx2:
      return encode_base64_lines_avx2(out, in, lines);
    case Base64Code::avx512vbmi:
      return encode_base64_lines_avx512vbmi(out, in, lines);
    case Base64Code::scalar:
      break;
  }
  encode_lines_scalar(out, in, lines);
}

std::size_t decode_base64_lines(std::uint8_t* out, const std::uint8_t* text, std::size_t lines, Base64LineEnd end,
                                Base64Code code) {
  const std::size_t line_len = base64_line_len(end);
  switch (code) {
    case Base64Code::avx2:
      return decode_base64_lines_avx2(out, text, lines, line_len);
    case Base64Code::avx512vbmi:
      return decode_base64_lines_avx512vbmi(out, text, lines, line_len);
    case Base64Code::scalar:
      break;
  }
  return end == Base64LineEnd::lf ? decode_lines_scalar<kBase64LineLen>(out, text, lines)
                                  : decode_lines_scalar<kBase64LineLen + 1>(out, text, lines);
}

void encode_base64_groups(std::uint8_t* out, const std::uint8_t* in, std::size_t groups) {
  for (std::size_t group = 0; group < groups; ++group) encode_group(out + 4 * group, in + 3 * group);
}

std::size_t encode_base64_block(std::uint8_t* out, std::span<const std::uint8_t> in) {
  const std::size_t whole = in.size() / 3;
  encode_base64_groups(out, in.data(), whole);
  const std::size_t rest = in.size() - 3 * whole;
  if (rest == 0) return 4 * whole;
  std::uint8_t last[3] = {in[3 * whole], rest == 2 ? in[3 * whole + 1] : std::uint8_t{0}, 0};
  std::uint8_t* group = out + 4 * whole;
  encode_group(group, last);
  group[3] = '=';
  if (rest == 1) group[2] = '=';
  return 4 * whole + 4;
}

Base64LineFault decode_base64_line(std::uint8_t* out, std::string_view line, std::size_t& len) {
  if (line.empty() || line.size() > kBase64LineChars || line.size() % 4 != 0) return Base64LineFault::not_groups;
  // '=' closes the last group, once or twice: "xx==" carries one byte, "xxx=" two.
  std::size_t padding = 0;
  while (padding < 2 && line[line.size() - 1 - padding] == '=') ++padding;
  const std::size_t groups = line.size() / 4 - (padding != 0);
  std::uint32_t seen = 0;
  const auto* text = reinterpret_cast<const std::uint8_t*>(line.data());
  for (std::size_t group = 0; group < groups; ++group) seen |= decode_group(out + 3 * group, text + 4 * group);
  len = 3 * groups;
  if (padding == 0) return (seen & kOutside) != 0 ? Base64LineFault::not_base64 : Base64LineFault::none;
  const std::string_view last = line.substr(4 * groups, 4 - padding);
  for (const char c : last) seen |= kDecode3[static_cast<unsigned char>(c)];
  if ((seen & kOutside) != 0) return Base64LineFault::not_base64;
  const std::uint32_t bits = (std::uint32_t{value_of(last[0])} << 18) | (std::uint32_t{value_of(last[1])} << 12) |
                             (padding == 1 ? std::uint32_t{value_of(last[2])} << 6 : 0);
  // The bits a padded group doesn't carry must be zero: else the line is not
  // the one encoding of its bytes.
  const std::uint32_t unused = padding == 1 ? 0xffu : 0xffffu;
  if ((bits & unused) != 0) return Base64LineFault::not_canonical;
  out[len++] = static_cast<std::uint8_t>(bits >> 16);
  if (padding == 1) out[len++] = static_cast<std::uint8_t>(bits >> 8);
  return Base64LineFault::none;
}

}  // namespace paes
