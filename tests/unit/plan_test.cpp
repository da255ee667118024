#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "paes/error.hpp"
#include "paes/job.hpp"
#include "paes/plan.hpp"
#include "paes/transform.hpp"
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
  const ChunkPlan plan(spec, 100);  // rounded down to 96
  EXPECT_TRUE(plan.parallel());
  EXPECT_EQ(plan.chunk_len(), 96u);
  EXPECT_EQ(plan.piece_len(), 96u);
  const std::uint64_t count = plan.chunk_count(1000);
  EXPECT_EQ(count, 11u);
  std::uint64_t covered = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    const Chunk c = chunk_of(plan, 1000, count, i);
    EXPECT_EQ(c.in_offset, covered);
    EXPECT_EQ(c.in_offset % kBlockLen, 0u);
    EXPECT_EQ(c.last, i + 1 == count);
    EXPECT_EQ(plan.start_state(c, nullptr), add_to_counter(spec.iv, c.in_offset / kBlockLen));
    covered += c.in_len;
  }
  EXPECT_EQ(covered, 1000u);
  EXPECT_EQ(plan.chunk_count(0), 1u);  // an empty message is one empty chunk
}

TEST(ChunkPlan, DefaultChunkIsAboutTheSameWorkInEveryMode) {
  const CipherSpec ctr_spec = test::make_spec(Mode::ctr, Direction::encrypt, 128, 1);
  EXPECT_EQ(ChunkPlan(ctr_spec, ChunkPlan::kAutoChunkLen).chunk_len(), ChunkPlan::kDefaultChunkLen);
  const CipherSpec cfb8_spec = test::make_spec(Mode::cfb8, Direction::decrypt, 128, 1);
  EXPECT_EQ(ChunkPlan(cfb8_spec, ChunkPlan::kAutoChunkLen).chunk_len(), 64u << 10);
  const CipherSpec cfb1_spec = test::make_spec(Mode::cfb1, Direction::decrypt, 128, 1);
  const ChunkPlan cfb1(cfb1_spec, ChunkPlan::kAutoChunkLen);
  EXPECT_EQ(cfb1.chunk_len(), 16u << 10);
  // 64 chunks of about a default chunk's work each (a 1 MiB job still runs on
  // one worker: one per MiB of input; larger ones spread theirs over threads).
  EXPECT_EQ(cfb1.chunk_count(1 << 20), 64u);
}

TEST(ChunkPlan, FittedChunksGiveEveryWorkerSeveral) {
  constexpr std::uint64_t MiB = 1 << 20;
  const std::uint64_t nominal = ChunkPlan::kDefaultChunkLen;
  // 16 MiB on 16 workers: a quarter of the default, four chunks each.
  EXPECT_EQ(ChunkPlan::fitted_chunk_len(Mode::ctr, 16 * MiB, 16), nominal / 4);
  EXPECT_EQ(16 * MiB / ChunkPlan::fitted_chunk_len(Mode::ctr, 16 * MiB, 16), 16u * ChunkPlan::kChunksPerWorker);
  // In between: whole blocks, each worker kChunksPerWorker of them.
  const std::uint64_t mid = ChunkPlan::fitted_chunk_len(Mode::ecb, 10 * MiB, 4);
  EXPECT_EQ(mid % kBlockLen, 0u);
  EXPECT_GT(mid, nominal / 4);
  EXPECT_LT(mid, nominal);
  EXPECT_EQ((10 * MiB + mid - 1) / mid, 4u * ChunkPlan::kChunksPerWorker);
  // Large inputs, or one worker, keep the default; small ones stop at the floor.
  EXPECT_EQ(ChunkPlan::fitted_chunk_len(Mode::ctr, 1024 * MiB, 16), nominal);
  EXPECT_EQ(ChunkPlan::fitted_chunk_len(Mode::ctr, 16 * MiB, 1), nominal);
  EXPECT_EQ(ChunkPlan::fitted_chunk_len(Mode::ctr, 0, 16), nominal / 4);
  // Scaled like the default for the modes that cost more per byte.
  EXPECT_EQ(ChunkPlan::fitted_chunk_len(Mode::cfb1, 16 * MiB, 16), ChunkPlan::default_chunk_len(Mode::cfb1));
  EXPECT_EQ(ChunkPlan::fitted_chunk_len(Mode::cfb8, 1 * MiB, 16), ChunkPlan::default_chunk_len(Mode::cfb8) / 4);
}

TEST(ChunkPlan, SequentialDirectionsRunInOrder) {
  for (auto [mode, direction] : {std::pair{Mode::cbc, Direction::encrypt},
                                 {Mode::cfb8, Direction::encrypt},
                                 {Mode::ofb, Direction::decrypt}}) {
    const CipherSpec spec = test::make_spec(mode, direction, 256, 2);
    const ChunkPlan plan(spec, 4096);
    EXPECT_FALSE(plan.parallel());
    EXPECT_EQ(plan.piece_len(), ChunkPlan::kDefaultChunkLen);  // not 4096: no parallelism to buy
    EXPECT_EQ(plan.chunk_count(10 << 20), 10u);  // pieces of one cipher stream, in order
    EXPECT_EQ(plan.lookback_len(), 0u);
    EXPECT_EQ(plan.start_state(chunk_of(plan, 10 << 20, 10, 0), nullptr), spec.iv);
  }
}

TEST(ChunkPlan, DecryptChunksStartFromThePreviousCiphertext) {
  const CipherSpec spec = test::make_spec(Mode::cbc, Direction::decrypt, 192, 3);
  const ChunkPlan plan(spec, 1024);
  ASSERT_EQ(plan.lookback_len(), kBlockLen);
  EXPECT_EQ(plan.start_state(chunk_of(plan, 4096, 4, 0), nullptr), spec.iv);
  const Block previous = block_from({1, 2, 3}, 0xab);
  EXPECT_EQ(plan.start_state(chunk_of(plan, 4096, 4, 2), previous.data()), previous);
  const CipherSpec ecb = test::make_spec(Mode::ecb, Direction::decrypt, 128, 3);
  EXPECT_EQ(ChunkPlan(ecb, 1024).lookback_len(), 0u);
}

TEST(ChunkPlan, PaddedEncryptionGrowsByOneBlock) {
  const CipherSpec spec = test::make_spec(Mode::ecb, Direction::encrypt, 128, 4);
  const ChunkPlan plan(spec, 1024);
  EXPECT_EQ(plan.max_output_len(0), 16u);
  EXPECT_EQ(plan.max_output_len(15), 16u);
  EXPECT_EQ(plan.max_output_len(16), 32u);
  EXPECT_EQ(output_capacity(plan, 5000), 5016u);
  const CipherSpec no_pad = test::make_spec(Mode::ecb, Direction::encrypt, 128, 4, false);
  EXPECT_EQ(ChunkPlan(no_pad, 1024).max_output_len(32), 32u);
}

TEST(ChunkPlan, RejectsImpossibleLengths) {
  const auto expect_failure = [](const CipherSpec& spec, std::uint64_t len, const char* text) {
    try {
      ChunkPlan(spec, 1024).chunk_count(len);
      ADD_FAILURE() << "accepted length " << len;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::failure);
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  expect_failure(test::make_spec(Mode::cbc, Direction::decrypt, 128, 5), 33, "multiple of 16");
  expect_failure(test::make_spec(Mode::ecb, Direction::encrypt, 128, 5, false), 17, "multiple of 16");
  expect_failure(test::make_spec(Mode::cbc, Direction::decrypt, 128, 5), 0, "bad decrypt");
  const CipherSpec ctr = test::make_spec(Mode::ctr, Direction::decrypt, 128, 5);
  EXPECT_NO_THROW(ChunkPlan(ctr, 1024).chunk_count(33));
  const CipherSpec cbc_no_pad = test::make_spec(Mode::cbc, Direction::decrypt, 128, 5, false);
  EXPECT_NO_THROW(ChunkPlan(cbc_no_pad, 1024).chunk_count(0));
}

TEST(ChunkPlan, RejectsChunkSizesOutOfRange) {
  const CipherSpec spec = test::make_spec(Mode::ctr, Direction::encrypt, 128, 6);
  for (std::uint64_t bad : {std::uint64_t{1}, std::uint64_t{15}, (std::uint64_t{1} << 30) + 1}) {
    try {
      ChunkPlan(spec, bad);
      ADD_FAILURE() << "accepted chunk size " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage);
    }
  }
}

TEST(JobTicket, RebuildsItsJobAndRefusesBytesPastTheEnums) {
  const CipherSpec spec = test::make_spec(Mode::ctr, Direction::encrypt, 256, 11);
  const ChunkPlan plan(spec, 4096);
  const SecretBytes original = plan.ticket();
  const SecretBytes again = job_from_ticket(original)->ticket();
  EXPECT_TRUE(std::equal(original.data(), original.data() + original.size(), again.data(), again.data() + again.size()));
  // Byte 1 is the mode, byte 2 the direction: a value past its enum indexed
  // the cipher's name table out of bounds.
  for (const std::size_t at : {std::size_t{1}, std::size_t{2}}) {
    SecretBytes ticket = plan.ticket();
    ticket.data()[at] = 99;
    EXPECT_THROW(job_from_ticket(ticket), Error) << "byte " << at;
  }
}

TEST(TransformMemory, InPlaceWhereSafeRefusedWhereNot) {
  const auto plain = test::random_bytes(300000, 5);
  TransformOptions options;
  options.chunk_len = 4096;
  options.threads = 2;
  std::atomic<std::uint64_t> progressed{0};  // told from any worker thread
  options.progress = [&](std::uint64_t bytes) { progressed += bytes; };
  for (const Mode mode : kAllModes) {
    CipherSpec encrypt = test::make_spec(mode, Direction::encrypt, 128, 21, false);
    std::vector<std::uint8_t> cipher(plain.size());
    transform_memory(encrypt, cipher, plain, options);
    CipherSpec decrypt = test::make_spec(mode, Direction::decrypt, 128, 21, false);
    std::vector<std::uint8_t> buffer = cipher;
    progressed = 0;
    const ChunkPlan plan(decrypt, options.chunk_len);
    if (plan.lookback_len() != 0) {
      EXPECT_THROW(transform_memory(decrypt, buffer, buffer, options), Error) << mode_name(mode);
      continue;
    }
    transform_memory(decrypt, buffer, buffer, options);
    EXPECT_EQ(buffer, plain) << mode_name(mode) << " decrypted in place";
    EXPECT_EQ(progressed.load(), plain.size()) << mode_name(mode);
  }
  // Overlapping without starting together: refused.
  std::vector<std::uint8_t> buffer = plain;
  const CipherSpec ctr = test::make_spec(Mode::ctr, Direction::encrypt, 128, 21);
  EXPECT_THROW(transform_memory(ctr, std::span(buffer).subspan(16), std::span(buffer).first(1000), options), Error);
}

}  // namespace
}  // namespace paes
