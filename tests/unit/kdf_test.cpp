// HMAC-SHA256 and the HKDF-SHA256 written on it: RFC 4231's and RFC 5869's
// SHA-256 known answers, an info far past the 32,768 bytes OpenSSL 3.0's own
// HKDF allows, RFC 5869's length limit, and a sealed file whose associated
// data (part of the HKDF info) is 1 MiB, through the public API.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cipher/kdf.hpp"
#include "paes/error.hpp"
#include "paes/sealed.hpp"
#include "paes/secret.hpp"
#include "test_support.hpp"
#include "util/hex.hpp"

namespace paes {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes ascii(std::string_view text) { return Bytes(text.begin(), text.end()); }

Bytes range_bytes(unsigned first, unsigned end) {
  Bytes bytes;
  for (unsigned b = first; b < end; ++b) bytes.push_back(static_cast<std::uint8_t>(b));
  return bytes;
}

std::string hkdf_hex(const Bytes& ikm, const Bytes& salt, const Bytes& info, std::size_t out_len) {
  return encode_hex(hkdf_sha256(SecretBytes(ikm.data(), ikm.size()), salt, info, out_len).view());
}

// RFC 4231 section 4: test cases 1, 2 and 6 (a key longer than SHA-256's
// block, which HMAC hashes first).
TEST(HmacSha256, Rfc4231KnownAnswers) {
  EXPECT_EQ(encode_hex(hmac_sha256(Bytes(20, 0x0b), ascii("Hi There"))),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(encode_hex(hmac_sha256(ascii("Jefe"), ascii("what do ya want for nothing?"))),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(encode_hex(hmac_sha256(Bytes(131, 0xaa), ascii("Test Using Larger Than Block-Size Key - Hash Key First"))),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(HmacSha256, TakesAnEmptyKeyAndMessage) {
  // Python: hmac.new(b"", b"", hashlib.sha256).hexdigest()
  EXPECT_EQ(encode_hex(hmac_sha256({}, {})), "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
}

// RFC 5869 appendix A, the SHA-256 cases: A.1 basic, A.2 80-byte inputs and
// an 82-byte output (three blocks), A.3 empty salt and info (OpenSSL's HKDF,
// which paes called before, refused an empty salt given as a null pointer).
TEST(HkdfSha256, Rfc5869KnownAnswers) {
  EXPECT_EQ(hkdf_hex(Bytes(22, 0x0b), range_bytes(0x00, 0x0d), range_bytes(0xf0, 0xfa), 42),
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865");
  EXPECT_EQ(hkdf_hex(range_bytes(0x00, 0x50), range_bytes(0x60, 0xb0), range_bytes(0xb0, 0x100), 82),
            "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c"
            "59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71"
            "cc30c58179ec3e87c14c01d5c1f3434f1d87");
  EXPECT_EQ(hkdf_hex(Bytes(22, 0x0b), {}, {}, 42),
            "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8");
}

// A 1 MiB info (byte i = i mod 251). The expected bytes come from an
// independent HKDF, Python's standard library:
//   prk = hmac.new(salt or bytes(32), ikm, sha256).digest()
//   t = b""; okm = b""
//   for i in range(1, n): t = hmac.new(prk, t + info + bytes([i]), sha256).digest(); okm += t
// (checked against RFC 5869's cases before it gave these).
TEST(HkdfSha256, TakesAnInfoOfOneMebibyte) {
  Bytes info(std::size_t{1} << 20);
  for (std::size_t i = 0; i < info.size(); ++i) info[i] = static_cast<std::uint8_t>(i % 251);
  EXPECT_EQ(hkdf_hex(Bytes(22, 0x0b), range_bytes(0x00, 0x0d), info, 82),
            "9f8f4071d5b66c99cb08961d0451d15001ac6b9d61da46653d00eeadc099c7f1"
            "727578751de434c8fcd796058e454d9a6d73377505d9b5f9b2134b2c6146e952"
            "820a297000f1ee54c9662d0a40427d81595d");
  EXPECT_EQ(hkdf_hex(Bytes(22, 0x0b), {}, info, 42),
            "178ab7b08017bf533e5acd36ef315313222469ce3a5a4929e48c9bad539a70e741bf90c3ec333ad82e8c");
}

TEST(HkdfSha256, DerivesAtMost255Blocks) {
  const Bytes ikm(32, 0x42);
  const std::string longest = hkdf_hex(ikm, {}, ascii("info"), 255 * 32);
  EXPECT_EQ(longest.size(), 2u * 255 * 32);
  // A shorter output is a prefix of a longer one (RFC 5869 section 2.3).
  EXPECT_EQ(hkdf_hex(ikm, {}, ascii("info"), 33), longest.substr(0, 66));
  EXPECT_THROW(hkdf_sha256(SecretBytes(ikm.data(), ikm.size()), {}, ascii("info"), 255 * 32 + 1), Error);
}

// The sealed format's HKDF info is its associated data (after the preamble,
// in paes' format), so an associated data of any length must seal and open.
class SealedLongAadTest : public test::ScratchDirTest {
 protected:
  SealedSpec spec(SealedFormat format, Direction direction, const Bytes& aad) const {
    SealedSpec s;
    s.direction = direction;
    s.format = format;
    s.key = SecretBytes(key_.data(), key_.size());
    s.segment_len = 4096;
    s.aad = aad;
    return s;
  }
  const Bytes key_ = test::random_bytes(32, 29);
};

TEST_F(SealedLongAadTest, OneMebibyteOfAssociatedDataRoundTripsAndBindsEveryByte) {
  const Bytes plain = test::random_bytes(3 * 4096 + 123, 4);
  write_bytes(path("plain.bin"), plain);
  const Bytes aad = test::random_bytes(std::size_t{1} << 20, 5);
  Bytes other_aad = aad;
  other_aad.back() ^= 1;
  for (const SealedFormat format : {SealedFormat::paes, SealedFormat::tink}) {
    const char* name = format == SealedFormat::paes ? "paes" : "tink";
    std::filesystem::remove(path("sealed"));
    std::filesystem::remove(path("out.bin"));
    run_sealed(spec(format, Direction::encrypt, aad), path("plain.bin"), path("sealed"), {});
    run_sealed(spec(format, Direction::decrypt, aad), path("sealed"), path("out.bin"), {});
    EXPECT_EQ(read_bytes(path("out.bin")), plain) << name;

    std::filesystem::remove(path("out.bin"));
    EXPECT_THROW(run_sealed(spec(format, Direction::decrypt, other_aad), path("sealed"), path("out.bin"), {}), Error)
        << name;
    EXPECT_FALSE(std::filesystem::exists(path("out.bin"))) << name;
  }
}

}  // namespace
}  // namespace paes
