// Armor's base64 codec against OpenSSL's EVP_EncodeBlock and EVP_DecodeBlock,
// at every code this CPU runs (scalar, AVX2, AVX-512 VBMI): random line
// counts at random alignments, nothing written outside the lines, every
// character that is not base64 refused at every column, and the strict
// single-line decoder's faults.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <algorithm>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "util/base64_lines.hpp"
#include "util/cpu_features.hpp"

namespace paes {
namespace {

constexpr std::uint8_t kGuard = 0xa5;
constexpr std::string_view kBase64Chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// OpenSSL's lines for whole 48-byte lines of `bytes`, each ending in `end`.
std::vector<std::uint8_t> openssl_lines(std::span<const std::uint8_t> bytes,
                                        Base64LineEnd end = Base64LineEnd::lf) {
  std::vector<std::uint8_t> text;
  for (std::size_t at = 0; at + kBase64LineBytes <= bytes.size(); at += kBase64LineBytes) {
    unsigned char line[kBase64LineChars + 1];
    EXPECT_EQ(EVP_EncodeBlock(line, bytes.data() + at, static_cast<int>(kBase64LineBytes)), 64);
    text.insert(text.end(), line, line + kBase64LineChars);
    if (end == Base64LineEnd::crlf) text.push_back('\r');
    text.push_back('\n');
  }
  return text;
}

constexpr Base64LineEnd kLineEnds[] = {Base64LineEnd::lf, Base64LineEnd::crlf};

std::string code_name(Base64Code code) { return std::string(base64_code_name(code)); }

TEST(Base64Lines, EveryCodeWritesOpenSslsLines) {
  std::mt19937 rng(1);
  for (const Base64Code code : runnable_base64_codes()) {
    for (int round = 0; round < 300; ++round) {
      const std::size_t lines = round < 5 ? static_cast<std::size_t>(round) : rng() % 40;
      const std::size_t in_at = rng() % 64;
      const std::size_t out_at = rng() % 64;
      std::vector<std::uint8_t> in(in_at + lines * kBase64LineBytes);
      std::generate(in.begin(), in.end(), [&] { return static_cast<std::uint8_t>(rng()); });
      const auto bytes = std::span(in).subspan(in_at);
      std::vector<std::uint8_t> out(out_at + lines * kBase64LineLen + 64, kGuard);
      encode_base64_lines(out.data() + out_at, bytes.data(), lines, code);
      const auto text = std::span(out).subspan(out_at, lines * kBase64LineLen);
      ASSERT_EQ(std::vector<std::uint8_t>(text.begin(), text.end()), openssl_lines(bytes))
          << code_name(code) << ", " << lines << " lines";
      EXPECT_TRUE(std::all_of(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(out_at),
                              [](std::uint8_t b) { return b == kGuard; }));
      EXPECT_TRUE(std::all_of(out.end() - 64, out.end(), [](std::uint8_t b) { return b == kGuard; }))
          << code_name(code) << " wrote past its lines";
    }
  }
}

TEST(Base64Lines, EveryCodeDecodesOpenSslsLines) {
  std::mt19937 rng(2);
  for (const Base64Code code : runnable_base64_codes()) {
    for (int round = 0; round < 600; ++round) {
      const Base64LineEnd end = kLineEnds[round % 2];
      const std::size_t line_len = base64_line_len(end);
      const std::size_t lines = round < 10 ? static_cast<std::size_t>(round / 2) : rng() % 40;
      const auto bytes = test::random_bytes(lines * kBase64LineBytes, rng);
      const auto lines_text = openssl_lines(bytes, end);
      const std::size_t text_at = rng() % 64;
      const std::size_t out_at = rng() % 64;
      std::vector<std::uint8_t> text(text_at, 'A');
      text.insert(text.end(), lines_text.begin(), lines_text.end());
      std::vector<std::uint8_t> out(out_at + bytes.size() + 64, kGuard);
      ASSERT_EQ(decode_base64_lines(out.data() + out_at, text.data() + text_at, lines, end, code), lines)
          << code_name(code);
      EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), out.begin() + static_cast<std::ptrdiff_t>(out_at)))
          << code_name(code) << ", " << lines << " lines";
      EXPECT_TRUE(std::all_of(out.end() - 64, out.end(), [](std::uint8_t b) { return b == kGuard; }))
          << code_name(code) << " wrote past its lines";
      // And as EVP_DecodeBlock reads each line.
      for (std::size_t line = 0; line < lines; ++line) {
        unsigned char decoded[kBase64LineBytes];
        ASSERT_EQ(EVP_DecodeBlock(decoded, lines_text.data() + line * line_len, 64), 48);
        EXPECT_TRUE(std::equal(decoded, decoded + kBase64LineBytes, out.begin() +
                               static_cast<std::ptrdiff_t>(out_at + line * kBase64LineBytes)));
      }
    }
  }
}

// Every byte value at every column of a line, in the first, a middle and the
// last of 5 lines: a character outside the alphabet ('=', '\r' and '\n'
// included), or anything but the line's end after column 64, stops the
// decoding at that line.
TEST(Base64Lines, EveryCodeRefusesWhatIsNotALine) {
  std::mt19937 rng(3);
  constexpr std::size_t kLines = 5;
  const auto bytes = test::random_bytes(kLines * kBase64LineBytes, rng);
  for (const Base64LineEnd end : kLineEnds) {
    const auto good = openssl_lines(bytes, end);
    const std::size_t line_len = base64_line_len(end);
    const std::string_view ending = end == Base64LineEnd::lf ? "\n" : "\r\n";
    for (const Base64Code code : runnable_base64_codes()) {
      std::vector<std::uint8_t> out(kLines * kBase64LineBytes);
      for (const std::size_t line : {std::size_t{0}, std::size_t{2}, kLines - 1}) {
        for (std::size_t column = 0; column < line_len; ++column) {
          for (int value = 0; value < 256; ++value) {
            const auto c = static_cast<char>(value);
            const bool fits = column >= kBase64LineChars ? c == ending[column - kBase64LineChars]
                                                         : kBase64Chars.find(c) != std::string_view::npos;
            auto text = good;
            text[line * line_len + column] = static_cast<std::uint8_t>(value);
            const std::size_t decoded = decode_base64_lines(out.data(), text.data(), kLines, end, code);
            ASSERT_EQ(decoded, fits ? kLines : line)
                << code_name(code) << ": byte " << value << " at line " << line << ", column " << column;
          }
        }
      }
    }
  }
}

TEST(Base64Lines, GroupsAndBlocksAreEvpEncodeBlocks) {
  std::mt19937 rng(4);
  for (std::size_t n = 0; n <= kBase64LineBytes; ++n) {
    const auto bytes = test::random_bytes(n, rng);
    unsigned char want[kBase64LineChars + 1];
    const int want_len = EVP_EncodeBlock(want, bytes.data(), static_cast<int>(n));
    std::uint8_t got[kBase64LineChars];
    ASSERT_EQ(encode_base64_block(got, bytes), static_cast<std::size_t>(want_len)) << n;
    EXPECT_TRUE(std::equal(got, got + want_len, want)) << n;
    std::uint8_t groups[kBase64LineChars];
    encode_base64_groups(groups, bytes.data(), n / 3);
    EXPECT_TRUE(std::equal(groups, groups + n / 3 * 4, want)) << n;
  }
}

TEST(Base64Lines, OneLineDecodesStrictly) {
  std::mt19937 rng(5);
  std::uint8_t out[kBase64LineBytes];
  std::size_t len = 0;
  for (std::size_t n = 1; n <= kBase64LineBytes; ++n) {
    const auto bytes = test::random_bytes(n, rng);
    char text[kBase64LineChars + 1];
    const int text_len = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(text), bytes.data(), static_cast<int>(n));
    const std::string line(text, static_cast<std::size_t>(text_len));
    ASSERT_EQ(decode_base64_line(out, line, len), Base64LineFault::none) << line;
    EXPECT_EQ(std::vector<std::uint8_t>(out, out + len), bytes) << line;
    // No other character anywhere gives these bytes: the line is their one encoding.
    for (std::size_t column = 0; column < line.size(); ++column) {
      for (int value = 0; value < 256; ++value) {
        if (static_cast<char>(value) == line[column]) continue;
        std::string changed = line;
        changed[column] = static_cast<char>(value);
        if (decode_base64_line(out, changed, len) != Base64LineFault::none) continue;
        EXPECT_NE(std::vector<std::uint8_t>(out, out + len), bytes) << changed;
      }
    }
  }
  const std::vector<std::pair<std::string, Base64LineFault>> faults = {
      {"", Base64LineFault::not_groups},
      {"QUJ", Base64LineFault::not_groups},
      {"QUJDR", Base64LineFault::not_groups},
      {std::string(68, 'Q'), Base64LineFault::not_groups},
      {"Q===", Base64LineFault::not_base64},
      {"====", Base64LineFault::not_base64},
      {"QQ=Q", Base64LineFault::not_base64},
      {"QQ==QUJD", Base64LineFault::not_base64},
      {"QU\nD", Base64LineFault::not_base64},
      {"QUJD ", Base64LineFault::not_groups},
      {"QU D", Base64LineFault::not_base64},
      {"QUJ\xc4", Base64LineFault::not_base64},
      {"QR==", Base64LineFault::not_canonical},
      {"QUK=", Base64LineFault::not_canonical},
      {"QQ==", Base64LineFault::none},
      {"QUI=", Base64LineFault::none},
      {std::string(64, '/'), Base64LineFault::none},
  };
  for (const auto& [line, fault] : faults) EXPECT_EQ(decode_base64_line(out, line, len), fault) << line;
}

// The code chosen is the widest this CPU runs, and each is runnable only
// where the CPU has what it needs.
TEST(Base64Lines, TheWidestRunnableCodeIsChosen) {
  const std::vector<Base64Code> codes = runnable_base64_codes();
  ASSERT_FALSE(codes.empty());
  EXPECT_EQ(codes.front(), Base64Code::scalar);
  EXPECT_EQ(best_base64_code(), codes.back());
#if defined(__x86_64__)
  const CpuFeatures cpu = detect_cpu_features();
  const auto runs = [&](Base64Code code) { return std::find(codes.begin(), codes.end(), code) != codes.end(); };
  EXPECT_EQ(runs(Base64Code::avx2), cpu.avx2);
  EXPECT_EQ(runs(Base64Code::avx512vbmi), cpu.avx512f && cpu.avx512bw && cpu.avx512vbmi);
#else
  EXPECT_EQ(codes.size(), 1u);
#endif
  std::cout << "base64 codes run here:";
  for (const Base64Code code : codes) std::cout << ' ' << base64_code_name(code);
  std::cout << '\n';
}

}  // namespace
}  // namespace paes
