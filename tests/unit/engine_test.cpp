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

// The rates auto measured survive a run, and a damaged cache is no error.
TEST(AutoEngine, MeasuredRatesAreKeptAndOnlyAFasterGpuWins) {
  const auto dir = std::filesystem::temp_directory_path() / ("paes-rates-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "auto-rates";
  {
    RateCache cache(file);
    EXPECT_FALSE(cache.find("ctr").has_value());
    cache.store("ctr 128", {40e9, 20e9});
    cache.store("ecb 256", {5e9, 20e9});
  }
  const RateCache again(file);
  ASSERT_TRUE(again.find("ctr 128").has_value());
  EXPECT_DOUBLE_EQ(again.find("ctr 128")->gpu_bytes_per_s, 40e9);
  EXPECT_TRUE(gpu_measured_faster(*again.find("ctr 128")));
  EXPECT_FALSE(gpu_measured_faster(*again.find("ecb 256")));
  EXPECT_FALSE(gpu_measured_faster({20e9, 20e9}));  // a tie stays on the CPU
  {
    std::ofstream junk(file, std::ios::app);
    junk << "half a line\n\tno key 1 2\nnegative\t-1\t5\n";
  }
  const RateCache damaged(file);
  EXPECT_TRUE(damaged.find("ctr 128").has_value());
  EXPECT_FALSE(damaged.find("negative").has_value());
  RateCache nowhere(dir / "missing" / "deeper" / "auto-rates");
  nowhere.store("k", {1, 2});  // creates its directory
  EXPECT_TRUE(RateCache(dir / "missing" / "deeper" / "auto-rates").find("k").has_value());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace paes
