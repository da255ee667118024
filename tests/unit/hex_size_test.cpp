#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "util/hex.hpp"
#include "util/size.hpp"

namespace paes {
namespace {

TEST(ParseSize, AcceptsBinarySuffixes) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("64K"), 64u << 10);
  EXPECT_EQ(parse_size("64k"), 64u << 10);
  EXPECT_EQ(parse_size("4M"), 4u << 20);
  EXPECT_EQ(parse_size("1G"), 1u << 30);
  EXPECT_EQ(parse_size("2T"), std::uint64_t{2} << 40);
  EXPECT_EQ(parse_size("64KiB"), 64u << 10);
  EXPECT_EQ(parse_size("10B"), 10u);
  EXPECT_EQ(parse_size("0"), 0u);
}

TEST(ParseSize, RejectsGarbageAndOverflow) {
  for (const char* bad : {"", "K", "12Q", "1.5M", "-4", "4 M", "4MM", "0x10", "99999999999999999999",
                          "16777216T"}) {
    EXPECT_FALSE(parse_size(bad).has_value()) << bad;
  }
}

TEST(Hex, RoundTrips) {
  const auto bytes = decode_hex("00ff10aB");
  ASSERT_TRUE(bytes);
  ASSERT_EQ(bytes->size(), 4u);
  EXPECT_EQ(encode_hex(bytes->view()), "00ff10ab");
}

TEST(Hex, EncodesIntoSecretMemory) {
  const auto bytes = decode_hex("00ff10aB");
  ASSERT_TRUE(bytes);
  SecretBytes text(8);
  encode_hex_into(bytes->view(), {text.data(), text.size()});
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(text.data()), text.size()), "00ff10ab");
  EXPECT_THROW(encode_hex_into(bytes->view(), {text.data(), 7}), std::invalid_argument);
}

TEST(Hex, RejectsOddLengthAndNonHex) {
  EXPECT_FALSE(decode_hex("abc"));
  EXPECT_FALSE(decode_hex("zz"));
  EXPECT_FALSE(decode_hex("0g"));
  EXPECT_TRUE(decode_hex(""));
}

}  // namespace
}  // namespace paes
