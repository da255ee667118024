// The sealed format's pieces: preamble and header encoding, segment geometry
// (Tink's rules), and the GCM segment codec's refusal of every wrong input.
#include <gtest/gtest.h>

#include "format/sealed_format.hpp"
#include "paes/error.hpp"
#include "test_support.hpp"

namespace paes {
namespace {

SecretBytes key_of(std::size_t len, std::uint32_t seed) {
  const auto bytes = test::random_bytes(len, seed);
  return SecretBytes(bytes.data(), bytes.size());
}

TEST(Preamble, RoundTripsAndIsThirtyTwoBytes) {
  Preamble p;
  p.version = kUncommittedFormatVersion;
  p.key_source = KeySource::scrypt_passphrase;
  p.key_len = 16;
  p.scrypt = {18, 8, 1};
  p.segment_len = 4096;
  p.salt.fill(0xab);
  const auto bytes = p.encode();
  ASSERT_EQ(bytes.size(), kPreambleLen);
  EXPECT_EQ(bytes[0], 'P');
  EXPECT_EQ(bytes[4], kUncommittedFormatVersion);
  const Preamble q = Preamble::decode(bytes, "f");
  EXPECT_EQ(q.version, kUncommittedFormatVersion);
  EXPECT_EQ(q.key_source, KeySource::scrypt_passphrase);
  EXPECT_EQ(q.key_len, 16);
  EXPECT_EQ(q.scrypt.log2_n, 18);
  EXPECT_EQ(q.segment_len, 4096u);
  EXPECT_EQ(q.salt, p.salt);
}

TEST(Preamble, RefusesWhatNoPaesWrites) {
  const auto good = Preamble{}.encode();
  const auto expect_error = [](std::vector<std::uint8_t> bytes, const char* text) {
    try {
      Preamble::decode(bytes, "f");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  std::vector<std::uint8_t> b(good.begin(), good.end());
  auto with = [&](std::size_t at, std::uint8_t v) { auto c = b; c[at] = v; return c; };
  expect_error(with(0, 'X'), "not a paes file");
  expect_error(with(4, 4), "unsupported paes format version 4");
  // Version 3 takes a raw key or stanzas, version 1 a raw key or scrypt's
  // parameters in the preamble; version 2, never released, is refused for
  // what it is.
  expect_error(with(5, 2), "key source 2 in a version 3 file");
  expect_error(with(4, 2), "version 2, a recipients format that was never released");
  expect_error(std::vector<std::uint8_t>(b.begin(), b.begin() + 20), "truncated preamble");
  expect_error(with(5, 4), "unknown key source");
  {
    auto v1 = with(4, kUncommittedFormatVersion);
    v1[5] = 3;
    expect_error(v1, "key source 3 in a version 1 file");
  }
  {
    auto stanzas = with(5, 3);
    stanzas[6] = 16;
    expect_error(stanzas, "key length 16 with the key in stanzas");
    stanzas[6] = 32;
    stanzas[20] = 1;  // the salt field: random only for a version-3 raw key
    expect_error(stanzas, "a salt on a file whose key is in stanzas");
    auto v1 = with(4, kUncommittedFormatVersion);
    v1[20] = 1;
    expect_error(v1, "a salt on a raw-key file of version 1");
    auto salted = with(20, 1);
    EXPECT_EQ(Preamble::decode(salted, "f").salt[4], 1);
  }
  expect_error(with(6, 24), "key length 24");
  expect_error(with(10, 1), "reserved");
  expect_error(with(7, 18), "scrypt parameters on a raw-key file");
  expect_error(with(12, 0x10), "segment size");  // 256 MiB + 1 MiB: above 64 MiB

  Preamble passphrase;
  passphrase.version = kUncommittedFormatVersion;
  passphrase.key_source = KeySource::scrypt_passphrase;
  passphrase.scrypt = {18, 8, 1};
  passphrase.salt.fill(0xab);
  const auto p = passphrase.encode();
  b.assign(p.begin(), p.end());
  expect_error(with(8, 0), "missing scrypt parameters");
  expect_error(with(8, 16), "scrypt r 16 and p 1");    // r is fixed: CPU and memory grow with it
  expect_error(with(9, 255), "scrypt r 8 and p 255");  // 255 scrypt runs from one hostile header
}

TEST(StreamHeader, IsTinksLayout) {
  const StreamHeader h = StreamHeader::random(32);
  const auto bytes = h.encode();
  ASSERT_EQ(bytes.size(), 40u);  // 1 + 32 + 7
  EXPECT_EQ(bytes[0], 40);
  const StreamHeader back = StreamHeader::decode(bytes, 32);
  EXPECT_EQ(back.salt, h.salt);
  EXPECT_EQ(back.nonce_prefix, h.nonce_prefix);
  EXPECT_THROW(StreamHeader::decode(bytes, 16), Error);  // length byte says 256-bit
  EXPECT_THROW(StreamHeader::decode(std::span(bytes).first(39), 32), Error);
}

// Segment 0 is shorter by the header; the ciphertext of every segment but
// the last is exactly S bytes, with segment 0 sharing them with the header.
TEST(SegmentJob, GeometryFollowsTink) {
  const SecretBytes key = key_of(16, 1);
  const NoncePrefix prefix{};
  const SegmentJob seal(Direction::encrypt, 16, 100, key, prefix);  // header 24, tag 16
  EXPECT_EQ(seal.nominal_in_len(0), 60u);
  EXPECT_EQ(seal.nominal_in_len(1), 84u);
  EXPECT_EQ(seal.chunk_count(0), 1u);
  EXPECT_EQ(seal.chunk_count(60), 1u);   // exactly full: one segment, no empty one after it
  EXPECT_EQ(seal.chunk_count(61), 2u);
  EXPECT_EQ(seal.chunk_count(60 + 84), 2u);
  EXPECT_EQ(seal.chunk_count(60 + 84 + 1), 3u);
  const Chunk c1 = seal.chunk(1, 84, false);
  EXPECT_EQ(c1.in_offset, 60u);
  EXPECT_EQ(c1.out_offset, 76u);  // 100 - 24: segment 1 starts S bytes into the body

  const SegmentJob open(Direction::decrypt, 16, 100, key, prefix);
  EXPECT_EQ(open.nominal_in_len(0), 76u);
  EXPECT_EQ(open.nominal_in_len(1), 100u);
  EXPECT_EQ(open.chunk_count(16), 1u);   // an empty message: one tag
  EXPECT_EQ(open.chunk_count(76 + 100 + 17), 3u);
  EXPECT_THROW(open.chunk_count(0), Error);          // nothing: truncated
  EXPECT_THROW(open.chunk_count(15), Error);         // shorter than a tag
  EXPECT_THROW(open.chunk_count(76 + 15), Error);    // a last segment shorter than its tag
  EXPECT_EQ(open.chunk(2, 17, true).out_offset, 60u + 84u);
}

TEST(SegmentJob, RefusesMoreThanTwoToThe32Segments) {
  const SecretBytes key = key_of(16, 2);
  const SegmentJob seal(Direction::encrypt, 16, 41, key, NoncePrefix{});  // 1 byte in segment 0, 25 after
  EXPECT_NO_THROW(seal.chunk_count(1 + 25 * ((std::uint64_t{1} << 32) - 1)));
  EXPECT_THROW(seal.chunk_count(1 + 25 * ((std::uint64_t{1} << 32) - 1) + 1), Error);
}

TEST(SegmentJob, SegmentSizeBoundsAreTinks) {
  const SecretBytes key = key_of(32, 3);
  EXPECT_THROW(SegmentJob(Direction::encrypt, 32, 56, key, NoncePrefix{}), Error);  // no room for a byte
  EXPECT_NO_THROW(SegmentJob(Direction::encrypt, 32, 57, key, NoncePrefix{}));
  EXPECT_THROW(SegmentJob(Direction::encrypt, 32, (64u << 20) + 1, key, NoncePrefix{}), Error);
  EXPECT_THROW(check_sealed_params(24, 4096), Error);
}

TEST(SegmentCodec, DetectsEveryWrongInput) {
  const SecretBytes key = key_of(32, 4);
  NoncePrefix prefix{};
  prefix[0] = 7;
  TinkSegmentCodec sealer(segment_backend(BackendChoice{}), key, prefix, Direction::encrypt);
  const auto plain = test::random_bytes(100, 5);
  std::vector<std::uint8_t> sealed(116);
  ASSERT_EQ(sealer.seal(3, false, sealed.data(), plain.data(), plain.size()), 116u);

  TinkSegmentCodec opener(segment_backend(BackendChoice{}), key, prefix, Direction::decrypt);
  std::vector<std::uint8_t> out(116);
  ASSERT_EQ(opener.open(3, false, out.data(), sealed.data(), sealed.size()), 100u);
  out.resize(100);
  EXPECT_EQ(out, plain);
  out.resize(116);
  EXPECT_THROW(opener.open(4, false, out.data(), sealed.data(), sealed.size()), Error);  // moved
  EXPECT_THROW(opener.open(3, true, out.data(), sealed.data(), sealed.size()), Error);   // last flag
  for (std::size_t at : {std::size_t{0}, std::size_t{99}, std::size_t{100}, std::size_t{115}}) {
    auto bad = sealed;
    bad[at] ^= 1;
    EXPECT_THROW(opener.open(3, false, out.data(), bad.data(), bad.size()), Error) << at;
  }
  TinkSegmentCodec other_key(segment_backend(BackendChoice{}), key_of(32, 6), prefix, Direction::decrypt);
  EXPECT_THROW(other_key.open(3, false, out.data(), sealed.data(), sealed.size()), Error);
  // In place, as the engines run it.
  auto in_place = sealed;
  EXPECT_EQ(opener.open(3, false, in_place.data(), in_place.data(), in_place.size()), 100u);
  EXPECT_TRUE(std::equal(plain.begin(), plain.end(), in_place.begin()));
}

}  // namespace
}  // namespace paes
