#include <gtest/gtest.h>

#include "paes/error.hpp"
#include "paes/plan.hpp"
#include "test_support.hpp"

namespace paes {
namespace {

Block block_from(std::initializer_list<int> tail_bytes, std::uint8_t fill) {
  Block b;
  b.fill(fill);
  std::size_t i = kBlockLen - tail_bytes.size();
  for (int v : tail_bytes) b[i++] = static_cast<std::uint8_t>(v);
  return b;
}

TEST(ParallelTable, MatchesDesign) {
  for (Direction d : {Direction::encrypt, Direction::decrypt}) {
    EXPECT_TRUE(is_parallel(Mode::ecb, d));
    EXPECT_TRUE(is_parallel(Mode::ctr, d));
    EXPECT_FALSE(is_parallel(Mode::ofb, d));
  }
  for (Mode m : {Mode::cbc, Mode::cfb128, Mode::cfb8, Mode::cfb1}) {
    EXPECT_FALSE(is_parallel(m, Direction::encrypt)) << mode_name(m);
    EXPECT_TRUE(is_parallel(m, Direction::decrypt)) << mode_name(m);
  }
}

TEST(Counter, CarriesThroughEveryByteAndWraps) {
  Block all_ff;
  all_ff.fill(0xff);
  Block zero{};
  EXPECT_EQ(add_to_counter(all_ff, 1), zero);  // 2^128 wraps to 0

  Block low32 = block_from({0xff, 0xff, 0xff, 0xff}, 0x00);
  Block expect = block_from({0x01, 0x00, 0x00, 0x00, 0x00}, 0x00);
  EXPECT_EQ(add_to_counter(low32, 1), expect);  // carry out of the low 32 bits

  Block low64 = block_from({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}, 0x00);
  expect = block_from({0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01}, 0x00);
  EXPECT_EQ(add_to_counter(low64, 3), expect);  // carry out of the low 64 bits

  EXPECT_EQ(add_to_counter(zero, 0x0102), block_from({0x01, 0x02}, 0x00));
  const Block big = add_to_counter(zero, ~std::uint64_t{0});
  EXPECT_EQ(add_to_counter(big, 1), block_from({1, 0, 0, 0, 0, 0, 0, 0, 0}, 0x00));
}

TEST(ChunkPlan, SplitsParallelInputIntoBlockAlignedChunks) {
  const CipherSpec spec = test::make_spec(Mode::ctr, Direction::encrypt, 128, 1);
  const ChunkPlan plan(spec, 1000, 100);  // rounded down to 96
  EXPECT_TRUE(plan.parallel());
  EXPECT_EQ(plan.chunk_len(), 96u);
  EXPECT_EQ(plan.piece_len(), 96u);
  EXPECT_EQ(plan.chunk_count(), 11u);
  std::uint64_t covered = 0;
  for (std::uint64_t i = 0; i < plan.chunk_count(); ++i) {
    const Chunk c = plan.chunk(i);
    EXPECT_EQ(c.in_offset, covered);
    EXPECT_EQ(c.in_offset % kBlockLen, 0u);
    EXPECT_EQ(c.last, i + 1 == plan.chunk_count());
    EXPECT_EQ(plan.start_state(c, nullptr), add_to_counter(spec.iv, c.in_offset / kBlockLen));
    covered += c.in_len;
  }
  EXPECT_EQ(covered, 1000u);
}

TEST(ChunkPlan, DefaultChunkIsAboutTheSameWorkInEveryMode) {
  const ChunkPlan ctr(test::make_spec(Mode::ctr, Direction::encrypt, 128, 1), 100 << 20, ChunkPlan::kAutoChunkLen);
  EXPECT_EQ(ctr.chunk_len(), ChunkPlan::kDefaultChunkLen);
  const ChunkPlan cfb8(test::make_spec(Mode::cfb8, Direction::decrypt, 128, 1), 1 << 20, ChunkPlan::kAutoChunkLen);
  EXPECT_EQ(cfb8.chunk_len(), 64u << 10);
  const ChunkPlan cfb1(test::make_spec(Mode::cfb1, Direction::decrypt, 128, 1), 1 << 20, ChunkPlan::kAutoChunkLen);
  EXPECT_EQ(cfb1.chunk_len(), 16u << 10);
  EXPECT_EQ(cfb1.chunk_count(), 64u);  // a 1 MiB CFB1 job spreads over threads
}

TEST(ChunkPlan, SequentialDirectionsAreOneChunk) {
  for (auto [mode, direction] : {std::pair{Mode::cbc, Direction::encrypt},
                                 {Mode::cfb8, Direction::encrypt},
                                 {Mode::ofb, Direction::decrypt}}) {
    const CipherSpec spec = test::make_spec(mode, direction, 256, 2);
    const ChunkPlan plan(spec, 10 << 20, 4096);
    EXPECT_FALSE(plan.parallel());
    EXPECT_EQ(plan.chunk_count(), 1u);
    EXPECT_EQ(plan.chunk(0).in_len, 10u << 20);
    EXPECT_EQ(plan.piece_len(), ChunkPlan::kDefaultChunkLen);  // not 4096: no parallelism to buy
    EXPECT_EQ(plan.start_state(plan.chunk(0), nullptr), spec.iv);
  }
}

TEST(ChunkPlan, DecryptChunksStartFromThePreviousCiphertext) {
  const CipherSpec spec = test::make_spec(Mode::cbc, Direction::decrypt, 192, 3);
  const ChunkPlan plan(spec, 4096, 1024);
  ASSERT_EQ(plan.lookback_len(), kBlockLen);
  EXPECT_EQ(plan.start_state(plan.chunk(0), nullptr), spec.iv);
  const Block previous = block_from({1, 2, 3}, 0xab);
  EXPECT_EQ(plan.start_state(plan.chunk(2), previous.data()), previous);
  EXPECT_EQ(ChunkPlan(test::make_spec(Mode::ecb, Direction::decrypt, 128, 3), 4096, 1024).lookback_len(), 0u);
}

TEST(ChunkPlan, PaddedEncryptionGrowsByOneBlock) {
  const CipherSpec spec = test::make_spec(Mode::ecb, Direction::encrypt, 128, 4);
  EXPECT_EQ(ChunkPlan(spec, 0, 1024).max_output_len(), 16u);
  EXPECT_EQ(ChunkPlan(spec, 15, 1024).max_output_len(), 16u);
  EXPECT_EQ(ChunkPlan(spec, 16, 1024).max_output_len(), 32u);
  EXPECT_EQ(ChunkPlan(test::make_spec(Mode::ecb, Direction::encrypt, 128, 4, false), 32, 1024).max_output_len(), 32u);
}

TEST(ChunkPlan, RejectsImpossibleLengths) {
  const auto expect_failure = [](const CipherSpec& spec, std::uint64_t len, const char* text) {
    try {
      ChunkPlan(spec, len, 1024);
      ADD_FAILURE() << "accepted length " << len;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::failure);
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  expect_failure(test::make_spec(Mode::cbc, Direction::decrypt, 128, 5), 33, "multiple of 16");
  expect_failure(test::make_spec(Mode::ecb, Direction::encrypt, 128, 5, false), 17, "multiple of 16");
  expect_failure(test::make_spec(Mode::cbc, Direction::decrypt, 128, 5), 0, "bad decrypt");
  EXPECT_NO_THROW(ChunkPlan(test::make_spec(Mode::ctr, Direction::decrypt, 128, 5), 33, 1024));
  EXPECT_NO_THROW(ChunkPlan(test::make_spec(Mode::cbc, Direction::decrypt, 128, 5, false), 0, 1024));
}

TEST(ChunkPlan, RejectsChunkSizesOutOfRange) {
  const CipherSpec spec = test::make_spec(Mode::ctr, Direction::encrypt, 128, 6);
  for (std::uint64_t bad : {std::uint64_t{1}, std::uint64_t{15}, (std::uint64_t{1} << 30) + 1}) {
    try {
      ChunkPlan(spec, 100, bad);
      ADD_FAILURE() << "accepted chunk size " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage);
    }
  }
}

}  // namespace
}  // namespace paes
