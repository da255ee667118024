// SealedReader: random access to a sealed file's plaintext, against a whole
// decryption, around every segment and header boundary; damage inside and
// outside the range; truncation; the bare Tink format; reads from threads.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "paes/engine.hpp"
#include "paes/error.hpp"
#include "paes/notice.hpp"
#include "paes/sealed.hpp"
#include "paes/x25519_key.hpp"
#include "paes/secret.hpp"
#include "test_support.hpp"

namespace paes {
namespace {

constexpr std::uint32_t kSegment = 4096;
constexpr std::size_t kTag = 16;

class SealedReaderTest : public test::ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    key_ = SecretBytes(32);
    random_bytes({key_.data(), key_.size()});
    plain_.resize(10 * kSegment + 1234);
    random_bytes(plain_);
  }

  SealedSpec spec(SealedFormat format = SealedFormat::paes) const {
    SealedSpec s;
    s.format = format;
    s.key = key_.clone();
    s.segment_len = kSegment;
    s.aad = {'r', 'a', 'n', 'g', 'e'};
    return s;
  }
  // Seals plain_ into a file; returns its path.
  std::string seal(SealedFormat format = SealedFormat::paes) {
    write_bytes(path("plain.bin"), plain_);
    const std::string out = path(format == SealedFormat::paes ? "sealed.paes" : "sealed.tink");
    SealedSpec s = spec(format);
    s.direction = Direction::encrypt;
    run_sealed(s, path("plain.bin"), out, {});
    return out;
  }
  // Plaintext offsets where a segment starts (the first holds less: the header).
  std::vector<std::uint64_t> boundaries(std::size_t header_len) const {
    std::vector<std::uint64_t> at{0};
    for (std::uint64_t p = kSegment - header_len - kTag; p < plain_.size(); p += kSegment - kTag) at.push_back(p);
    at.push_back(plain_.size());
    return at;
  }

  // read_at(offset, len) of `reader` must give plain_'s bytes there: all of
  // them, or fewer only where the plaintext ends.
  void expect_read(const SealedReader& reader, std::uint64_t offset, std::size_t len) const {
    std::vector<std::uint8_t> got(len, 0xee);
    const std::size_t n = reader.read_at(offset, got);
    const std::size_t want = offset >= plain_.size() ? 0 : std::min<std::size_t>(len, plain_.size() - offset);
    ASSERT_EQ(n, want) << "offset " << offset << " length " << len;
    const auto from = plain_.begin() + static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(offset, plain_.size()));
    ASSERT_TRUE(std::equal(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(n), from))
        << "offset " << offset << " length " << len;
  }

  SecretBytes key_;
  std::vector<std::uint8_t> plain_;
};

TEST_F(SealedReaderTest, EveryRangeAroundSegmentBoundariesEqualsTheWholeDecryption) {
  for (const SealedFormat format : {SealedFormat::paes, SealedFormat::tink}) {
    const SealedReader reader(spec(format), seal(format), 3);
    ASSERT_EQ(reader.size(), plain_.size());
    const std::size_t header_len = 1 + 32 + 7;  // Tink's header for a 32-byte key
    for (const std::uint64_t edge : boundaries(header_len)) {
      for (const std::int64_t shift : {-17, -16, -1, 0, 1, 15, 16}) {
        const std::int64_t at = static_cast<std::int64_t>(edge) + shift;
        if (at < 0) continue;
        const auto offset = static_cast<std::uint64_t>(at);
        for (const std::size_t len : {std::size_t{0}, std::size_t{1}, std::size_t{17}, std::size_t{kSegment - 16},
                                      std::size_t{kSegment}, std::size_t{3 * kSegment + 5}, plain_.size()}) {
          expect_read(reader, offset, len);
        }
      }
    }
  }
}

// An age file: 64 KiB chunks, sixteen to a read; ranges around chunk and
// group boundaries, and a chunk damaged far from the range.
TEST_F(SealedReaderTest, ReadsAnAgeFileAroundChunkAndGroupBoundaries) {
  constexpr std::uint64_t kChunk = 64 * 1024;
  plain_.resize(40 * kChunk + 777);
  random_bytes(plain_);
  write_bytes(path("plain.bin"), plain_);
  const SecretBytes identity = x25519_generate_identity();
  SealedSpec s;
  s.direction = Direction::encrypt;
  s.format = SealedFormat::age;
  s.recipients.emplace_back(x25519_public_key(identity));
  run_sealed(s, path("plain.bin"), path("sealed.age"), {});
  SealedSpec opening;
  opening.identities.emplace_back(identity.clone());
  const SealedReader reader(opening, path("sealed.age"), 2);
  ASSERT_EQ(reader.size(), plain_.size());
  EXPECT_TRUE(reader.age());
  for (const std::uint64_t edge : {std::uint64_t{0}, kChunk, 15 * kChunk, 16 * kChunk, 17 * kChunk, 32 * kChunk,
                                   40 * kChunk, plain_.size()}) {
    for (const std::int64_t shift : {-1, 0, 1}) {
      const std::int64_t at = static_cast<std::int64_t>(edge) + shift;
      if (at < 0) continue;
      const auto offset = static_cast<std::uint64_t>(at);
      for (const std::size_t len : {std::size_t{1}, std::size_t{kChunk}, std::size_t{17 * kChunk + 3}}) {
        expect_read(reader, offset, len);
      }
    }
  }
  // Chunk 20 damaged (in the second group): the first group still reads, the second fails.
  std::vector<std::uint8_t> sealed = read_bytes(path("sealed.age"));
  sealed[sealed.size() - 20 * (kChunk + kTag) - 100] ^= 1;
  write_bytes(path("sealed.age"), sealed);
  const SealedReader damaged(opening, path("sealed.age"), 2);
  std::vector<std::uint8_t> got(100);
  EXPECT_EQ(damaged.read_at(5, got), got.size());
  EXPECT_THROW(damaged.read_at(20 * kChunk + 5, got), Error);
}

TEST_F(SealedReaderTest, DamageInsideTheRangeFailsAndOutsideItDoesNot) {
  const std::string path = seal();
  std::vector<std::uint8_t> sealed = read_bytes(path);
  const std::size_t body = 32 + 1 + 32 + 7;
  sealed[body + (kSegment - (1 + 32 + 7)) + 4 * kSegment + 100] ^= 0x01;  // inside segment 5
  write_bytes(path, sealed);
  const SealedReader reader(spec(), path);
  std::vector<std::uint8_t> got(kSegment);
  const std::uint64_t segment5 = (kSegment - (1 + 32 + 7) - kTag) + 4 * (kSegment - kTag);
  EXPECT_THROW(reader.read_at(segment5 + 10, got), Error);
  EXPECT_EQ(reader.read_at(0, got), got.size());  // segment 0 is intact
  EXPECT_TRUE(std::equal(got.begin(), got.end(), plain_.begin()));
  EXPECT_EQ(reader.read_at(plain_.size() - 10, got), 10u);  // the last one too
}

TEST_F(SealedReaderTest, TruncationAWrongKeyAndADamagedHeaderAreRefusedWhenOpened) {
  const std::string path = seal();
  const std::vector<std::uint8_t> sealed = read_bytes(path);
  const std::size_t body = 32 + 1 + 32 + 7;
  // Cut at a segment boundary: every remaining segment is whole, but the last
  // one lacks its final flag.
  write_bytes(path, {sealed.begin(), sealed.begin() + static_cast<std::ptrdiff_t>(body + 6 * kSegment - (1 + 32 + 7))});
  EXPECT_THROW(SealedReader(spec(), path), Error);
  write_bytes(path, {sealed.begin(), sealed.end() - 3});
  EXPECT_THROW(SealedReader(spec(), path), Error);
  write_bytes(path, sealed);
  SealedSpec wrong = spec();
  wrong.key.data()[0] ^= 1;
  EXPECT_THROW(SealedReader(wrong, path), Error);
  std::vector<std::uint8_t> header = sealed;
  header[32 + 5] ^= 0x80;  // the HKDF salt
  write_bytes(path, header);
  EXPECT_THROW(SealedReader(spec(), path), Error);
}

TEST_F(SealedReaderTest, ReadsFromSeveralThreadsAtOnceAndCountsWhatItRead) {
  const SealedReader reader(spec(), seal(), 2);
  const std::uint64_t opened = reader.bytes_read();
  EXPECT_LT(opened, 2 * kSegment);  // the header and the final segment only
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::uint8_t> got(2 * kSegment + 7);
      bool same = true;
      for (std::uint64_t offset = static_cast<std::uint64_t>(t) * 1000; offset < plain_.size(); offset += 5000) {
        const std::size_t n = reader.read_at(offset, got);
        same = same && std::equal(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(n),
                                  plain_.begin() + static_cast<std::ptrdiff_t>(offset));
      }
      ok[static_cast<std::size_t>(t)] = same ? 1 : 0;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(ok, std::vector<int>(4, 1));
  EXPECT_GT(reader.bytes_read(), opened);
}

TEST_F(SealedReaderTest, ReadRangeHandsOverVerifiedPartsInOrder) {
  const std::string path = seal();
  const SealedReader reader(spec(), path, 1);
  std::vector<std::uint8_t> got;
  std::size_t parts = 0;
  const auto append = [&](std::span<const std::uint8_t> part) {
    got.insert(got.end(), part.begin(), part.end());
    ++parts;
  };
  EXPECT_EQ(reader.read_range(100, plain_.size(), append), plain_.size() - 100);  // clamped at the end
  EXPECT_GT(parts, 1u);  // 11 segments: never all at once
  EXPECT_TRUE(std::equal(got.begin(), got.end(), plain_.begin() + 100, plain_.end()));
  got.clear();
  parts = 0;
  EXPECT_EQ(reader.read_range(plain_.size(), 10, append), 0u);
  EXPECT_EQ(reader.read_range(5, 0, append), 0u);
  EXPECT_EQ(parts, 0u);

  // Damage in segment 9: what came before it is handed over, then it throws,
  // and nothing of segment 9 is handed over.
  std::vector<std::uint8_t> sealed = read_bytes(path);
  sealed[sealed.size() - kSegment / 2] ^= 0x01;  // the final segment (10) holds less than kSegment / 2
  write_bytes(path, sealed);
  const SealedReader damaged(spec(), path, 1);
  const std::size_t segment9 = (kSegment - (1 + 32 + 7) - kTag) + 8 * (kSegment - kTag);
  EXPECT_THROW(damaged.read_range(0, plain_.size(), append), Error);
  EXPECT_LE(got.size(), segment9);
  EXPECT_GE(got.size(), segment9 - 4 * (kSegment - kTag));  // at most a window of four is lost
  EXPECT_TRUE(std::equal(got.begin(), got.end(), plain_.begin()));
}

TEST_F(SealedReaderTest, APipeIsRefused) {
  EXPECT_THROW(SealedReader(spec(), "-"), Error);
  // sealed_key_kind too: the preamble it read would be lost to the job after it.
  EXPECT_THROW(sealed_key_kind("-"), Error);
  EXPECT_EQ(sealed_key_kind(seal()), SealedKeyKind::raw_key);
}

TEST_F(SealedReaderTest, SealingWithAKeyAndAPassphraseIsRefused) {
  // The passphrase won and the key was ignored: opening with that key then failed.
  write_bytes(path("plain.bin"), plain_);
  SealedSpec s = spec();
  s.direction = Direction::encrypt;
  const char passphrase[] = "both";
  s.passphrase = SecretBytes(reinterpret_cast<const std::uint8_t*>(passphrase), sizeof passphrase - 1);
  EXPECT_THROW(run_sealed(s, path("plain.bin"), path("both.paes"), {}), Error);
  EXPECT_FALSE(std::filesystem::exists(path("both.paes")));
  // Opening too: the passphrase won and the key was ignored.
  SealedSpec open = spec();
  open.direction = Direction::decrypt;
  open.passphrase = s.passphrase.clone();
  EXPECT_THROW(run_sealed(open, seal(), path("opened.bin"), {}), Error);
}

}  // namespace
}  // namespace paes
