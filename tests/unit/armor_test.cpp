// Armor fed in pieces of every size: text and bytes cut anywhere (a line, a
// marker, a "\r\n") decode to the same bytes, and the text is the same
// whatever the pieces were.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <random>
#include <string>
#include <vector>

#include "paes/error.hpp"
#include "test_support.hpp"
#include "util/armor.hpp"

namespace paes {
namespace {

// `data` given to `take` in pieces of 1 to `most` bytes.
template <class Take>
void in_pieces(std::span<const std::uint8_t> data, std::size_t most, std::mt19937& rng, Take take) {
  while (!data.empty()) {
    const std::size_t n = std::min<std::size_t>(data.size(), 1 + rng() % most);
    take(data.first(n));
    data = data.subspan(n);
  }
}

std::vector<std::uint8_t> encode(Armor armor, std::span<const std::uint8_t> bytes, std::size_t most, std::mt19937& rng) {
  ArmorEncoder encoder(armor);
  std::vector<std::uint8_t> text;
  in_pieces(bytes, most, rng, [&](auto piece) { encoder.encode(piece, text); });
  encoder.finish(text);
  return text;
}

std::vector<std::uint8_t> decode(Armor armor, std::span<const std::uint8_t> text, std::size_t most, std::mt19937& rng) {
  ArmorDecoder decoder(armor, "test");
  std::vector<std::uint8_t> bytes;
  in_pieces(text, most, rng, [&](auto piece) { decoder.decode(piece, bytes); });
  decoder.finish(bytes);
  return bytes;
}

// What EVP_EncodeBlock makes of the whole, in 48-byte lines: the text
// expected whatever the pieces.
std::vector<std::uint8_t> whole_lines(Armor armor, std::span<const std::uint8_t> bytes) {
  std::string text = armor == Armor::paes ? std::string(kArmorBegin) + "\n" : "";
  for (std::size_t at = 0; at < bytes.size(); at += 48) {
    unsigned char line[65];
    const int n = EVP_EncodeBlock(line, bytes.data() + at, static_cast<int>(std::min<std::size_t>(48, bytes.size() - at)));
    text.append(reinterpret_cast<const char*>(line), static_cast<std::size_t>(n));
    text += '\n';
  }
  if (armor == Armor::paes) text += std::string(kArmorEnd) + "\n";
  return {text.begin(), text.end()};
}

TEST(Armor, PiecesOfAnySizeGiveTheSameTextAndBytes) {
  std::mt19937 rng(7);
  for (const Armor armor : {Armor::openssl, Armor::paes}) {
    for (const std::size_t n : {1u, 2u, 3u, 47u, 48u, 49u, 95u, 96u, 97u, 1000u, 4099u}) {
      const auto bytes = test::random_bytes(n, rng);
      const auto expected = whole_lines(armor, bytes);
      for (const std::size_t most : {1u, 2u, 5u, 64u, 65u, 66u, 200u, 5000u}) {
        const auto text = encode(armor, bytes, most, rng);
        ASSERT_EQ(text, expected) << "n=" << n << " pieces up to " << most;
        EXPECT_EQ(decode(armor, text, most, rng), bytes) << "n=" << n << " pieces up to " << most;
        std::vector<std::uint8_t> crlf;
        for (const std::uint8_t c : text) {
          if (c == '\n') crlf.push_back('\r');
          crlf.push_back(c);
        }
        EXPECT_EQ(decode(armor, crlf, most, rng), bytes) << "CRLF, n=" << n << " pieces up to " << most;
      }
    }
  }
}

TEST(Armor, BeginLineRecognised) {
  const std::string lf = std::string(kArmorBegin) + "\nAAAA";
  const std::string crlf = std::string(kArmorBegin) + "\r\n";
  const std::string other = std::string(kArmorBegin) + "X\n";
  const auto span = [](const std::string& s) { return std::span(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()); };
  EXPECT_TRUE(starts_with_armor(span(lf)));
  EXPECT_TRUE(starts_with_armor(span(crlf)));
  EXPECT_FALSE(starts_with_armor(span(other)));
  EXPECT_FALSE(starts_with_armor(span(std::string(kArmorBegin))));
  // Whitespace before the BEGIN line, as age's armor reader takes it (up to 1024 bytes), and nothing else.
  EXPECT_TRUE(starts_with_armor(span(" \r\n\t" + lf)));
  EXPECT_FALSE(starts_with_armor(span("x" + lf)));
  EXPECT_FALSE(starts_with_armor(span(std::string(1025, '\n') + lf)));
  EXPECT_TRUE(starts_with_armor(span(std::string(1024, '\n') + lf)));
}

TEST(Armor, PaesArmorCutAnywhereFails) {
  std::mt19937 rng(11);
  const auto bytes = test::random_bytes(200, rng);
  const auto text = whole_lines(Armor::paes, bytes);
  // Every cut but after the END line's last character (its '\n' may be missing).
  for (std::size_t cut = 0; cut + 1 < text.size(); ++cut) {
    ArmorDecoder decoder(Armor::paes, "test");
    std::vector<std::uint8_t> out;
    EXPECT_THROW(
        {
          decoder.decode(std::span(text).first(cut), out);
          decoder.finish(out);
        },
        Error)
        << "cut at " << cut;
  }
  EXPECT_EQ(decode(Armor::paes, std::span(text).first(text.size() - 1), 7, rng), bytes);
}

// Lines that decode (EVP_DecodeBlock reads '=' as zero bits, and skips
// whitespace at either end) but are not the one encoding of their bytes.
TEST(Armor, NonCanonicalLinesAreRefused) {
  const std::string begin = std::string(kArmorBegin) + "\n";
  const std::string end = std::string(kArmorEnd) + "\n";
  const std::string full(64, 'Q');
  for (const std::string& body : std::vector<std::string>{"QQ=Q\n", "Q===\n", "QR==\n", "QUJ=\nQUJD\n", "    " + full.substr(4) + "\n",
                                 full.substr(0, 60) + "    \n", full + "\nQQ=\n", "QU JD\n", "QUJD \n"}) {
    const std::string text = begin + body + end;
    ArmorDecoder decoder(Armor::paes, "test");
    std::vector<std::uint8_t> out;
    EXPECT_THROW(
        {
          decoder.decode({reinterpret_cast<const std::uint8_t*>(text.data()), text.size()}, out);
          decoder.finish(out);
        },
        Error)
        << body;
  }
  const std::string good = begin + "QQ==\n" + end;
  ArmorDecoder decoder(Armor::paes, "test");
  std::vector<std::uint8_t> out;
  decoder.decode({reinterpret_cast<const std::uint8_t*>(good.data()), good.size()}, out);
  decoder.finish(out);
  EXPECT_EQ(out, std::vector<std::uint8_t>{'A'});
}

}  // namespace
}  // namespace paes
