// age's payload as a SegmentJob (format/age_format.hpp): AgeChunkCodec's
// nonce, the grouping of sixteen
// 64 KiB chunks into an engine's chunk against a chunk-by-chunk reference,
// in place and not, and the lengths a payload can and can't have.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "cipher/x25519.hpp"
#include "format/age_format.hpp"
#include "paes/engine.hpp"
#include "paes/error.hpp"
#include "paes/io.hpp"
#include "test_support.hpp"
#include "util/hex.hpp"

namespace paes {
namespace {

constexpr std::size_t kChunk = kAgeChunkPlainLen;
constexpr std::size_t kSealedChunk = kChunk + kTagLen;

SecretBytes payload_key() {
  const auto bytes = test::random_bytes(32, 41);
  return SecretBytes(bytes.data(), bytes.size());
}

// age.md's payload, one chunk at a time, as age writes it: the reference.
std::vector<std::uint8_t> reference_seal(const SecretBytes& key, const std::vector<std::uint8_t>& plain) {
  AgeChunkCodec codec(key, Direction::encrypt);
  std::vector<std::uint8_t> out;
  std::size_t at = 0;
  std::uint64_t index = 0;
  do {
    const std::size_t len = std::min(kChunk, plain.size() - at);
    const bool last = at + len == plain.size();
    std::vector<std::uint8_t> sealed(len + kTagLen);
    codec.seal(index++, last, sealed.data(), plain.data() + at, len);
    out.insert(out.end(), sealed.begin(), sealed.end());
    at += len;
  } while (at < plain.size());
  return out;
}

// The job over a whole buffer, one chunk after another on one worker, in
// place (the output buffer holds the input first) or from the input.
std::vector<std::uint8_t> run_job(Direction direction, const SecretBytes& key, const std::vector<std::uint8_t>& in,
                                  bool in_place) {
  const SegmentJob job(direction, std::make_shared<AgeChunks>(key));
  const std::uint64_t count = job.chunk_count(in.size());
  std::vector<std::uint8_t> out(output_capacity(job, in.size()));
  const auto worker = job.make_worker();
  std::size_t total = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    const Chunk c = chunk_of(job, in.size(), count, i);
    std::vector<std::uint8_t> buffer(job.out_capacity(c));
    if (c.in_len != 0) std::memcpy(buffer.data(), in.data() + c.in_offset, c.in_len);  // data() may be null
    const std::size_t n = in_place ? worker->transform(c, buffer.data(), buffer.data())
                                   : worker->transform(c, buffer.data(), in.data() + c.in_offset);
    std::memcpy(out.data() + c.out_offset, buffer.data(), n);
    total += n;
  }
  out.resize(total);
  return out;
}

TEST(AgeChunkCodec, IsOneShotChaCha20Poly1305UnderAgesNonce) {
  // The nonce is the 11-byte big-endian counter and the last flag (age.md);
  // the AEAD, with no AAD, is the one the stanzas use (cipher/x25519.hpp).
  const SecretBytes key = payload_key();
  const auto plain = test::random_bytes(1000, 7);
  std::vector<std::uint8_t> sealed(plain.size() + kTagLen);
  AgeChunkCodec(key, Direction::encrypt).seal(0x0102030405060708ull, true, sealed.data(), plain.data(), plain.size());
  std::array<std::uint8_t, 12> nonce{0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 1};
  EXPECT_EQ(sealed, chacha20_poly1305_seal(key, nonce, plain));
}

TEST(AgePayload, SixteenChunksToAJobChunkGiveAgesBytesInPlaceAndNot) {
  const SecretBytes key = payload_key();
  for (const std::size_t size : {std::size_t{0}, std::size_t{1}, kChunk - 1, kChunk, kChunk + 1, 16 * kChunk,
                                 16 * kChunk + 1, 33 * kChunk + 77, 48 * kChunk}) {
    const auto plain = test::random_bytes(size, static_cast<std::uint32_t>(size));
    const auto want = reference_seal(key, plain);
    for (const bool in_place : {false, true}) {
      EXPECT_EQ(run_job(Direction::encrypt, key, plain, in_place), want) << size << (in_place ? " in place" : "");
      EXPECT_EQ(run_job(Direction::decrypt, key, want, in_place), plain) << size << (in_place ? " in place" : "");
    }
  }
}

TEST(AgePayload, LengthsNoWriterMakesAreRefused) {
  const SegmentJob job(Direction::decrypt, std::make_shared<AgeChunks>(payload_key()));
  EXPECT_EQ(job.chunk_count(kTagLen), 1u);              // the empty payload: one empty final chunk
  EXPECT_EQ(job.plaintext_len(kTagLen), 0u);
  EXPECT_THROW(job.chunk_count(0), Error);              // not even a tag
  EXPECT_THROW(job.chunk_count(kTagLen - 1), Error);
  EXPECT_THROW(job.chunk_count(kSealedChunk + kTagLen), Error);  // an empty final chunk after a full one
  EXPECT_THROW(job.chunk_count(kSealedChunk + 5), Error);        // a final chunk shorter than its tag
  EXPECT_EQ(job.chunk_count(kSealedChunk), 1u);
  EXPECT_EQ(job.chunk_count(17 * kSealedChunk), 2u);
  EXPECT_EQ(job.plaintext_len(17 * kSealedChunk + 100), 17 * kChunk + 100 - kTagLen);
  EXPECT_EQ(job.segment_count(17 * kSealedChunk + 100), 18u);
}

TEST(AgePayload, AnyChangeOrMoveFailsItsChunk) {
  const SecretBytes key = payload_key();
  const auto plain = test::random_bytes(3 * kChunk + 10, 3);
  const auto sealed = reference_seal(key, plain);
  auto flipped = sealed;
  flipped[kSealedChunk + 100] ^= 1;
  EXPECT_THROW(run_job(Direction::decrypt, key, flipped, false), Error);
  auto swapped = sealed;  // chunks 0 and 1 exchanged: each fails at its new index
  std::swap_ranges(swapped.begin(), swapped.begin() + kSealedChunk, swapped.begin() + kSealedChunk);
  EXPECT_THROW(run_job(Direction::decrypt, key, swapped, false), Error);
  // Cut after a full chunk: that chunk was not sealed as the last.
  const std::vector<std::uint8_t> cut(sealed.begin(), sealed.begin() + 2 * kSealedChunk);
  EXPECT_THROW(run_job(Direction::decrypt, key, cut, true), Error);
}

}  // namespace
}  // namespace paes
