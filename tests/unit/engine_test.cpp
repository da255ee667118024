#include <gtest/gtest.h>

#include "engine/auto_engine.hpp"
#include "format/sealed_format.hpp"
#include "paes/plan.hpp"
#include "test_support.hpp"

namespace paes {
namespace {

TEST(AutoEngine, PicksAGpuOnlyForLargeParallelRawJobsOnARealGpu) {
  const CipherSpec ctr = test::make_spec(Mode::ctr, Direction::encrypt, 256, 1);
  const ChunkPlan ctr_plan(ctr, ChunkPlan::kAutoChunkLen);
  const std::uint64_t big = kAutoGpuMinBytes;
  EXPECT_EQ(auto_engine_choice(ctr_plan, big, true, true), EngineKind::cuda);
  EXPECT_EQ(auto_engine_choice(ctr_plan, big, false, true), EngineKind::opencl);
  EXPECT_EQ(auto_engine_choice(ctr_plan, big, false, false), EngineKind::threads);  // no GPU (PoCL is no GPU)
  EXPECT_EQ(auto_engine_choice(ctr_plan, big - 1, true, true), EngineKind::threads);  // too small to pay

  const CipherSpec cbc_encrypt = test::make_spec(Mode::cbc, Direction::encrypt, 256, 1);
  EXPECT_EQ(auto_engine_choice(ChunkPlan(cbc_encrypt, 0), big, true, true), EngineKind::threads);  // sequential
  const CipherSpec cfb8 = test::make_spec(Mode::cfb8, Direction::decrypt, 256, 1);
  EXPECT_EQ(auto_engine_choice(ChunkPlan(cfb8, 0), big, true, true), EngineKind::threads);  // no GPU kernel
  const CipherSpec cbc_decrypt = test::make_spec(Mode::cbc, Direction::decrypt, 128, 1);
  EXPECT_EQ(auto_engine_choice(ChunkPlan(cbc_decrypt, 0), big, true, false), EngineKind::cuda);

  const SecretBytes key(32);
  const SegmentJob sealed(Direction::encrypt, 32, kDefaultSegmentLen, key, NoncePrefix{});
  EXPECT_EQ(auto_engine_choice(sealed, big, true, true), EngineKind::threads);  // AES-GCM stays on the CPU
}

}  // namespace
}  // namespace paes
