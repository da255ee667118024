// OpenSSL as the oracle: every mode, key size and direction, at sizes around
// every boundary, across engines, thread counts and chunk sizes, must give
// exactly OpenSSL's one-shot bytes, in memory and through files, for each
// cipher backend (each one runs the modes and directions it runs itself).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <tuple>

#include "cipher/oneshot.hpp"
#include "paes/engine.hpp"
#include "paes/plan.hpp"
#include "paes/transform.hpp"
#include "test_support.hpp"

namespace paes {
namespace {

struct Config {
  EngineKind engine;
  unsigned threads;
  std::uint64_t chunk_len;
};

TransformOptions options_for(const std::string& backend, EngineKind engine, unsigned threads, std::uint64_t chunk_len,
                             bool force) {
  TransformOptions options = test::on_backend(backend);
  options.engine = engine;
  options.threads = threads;
  options.chunk_len = chunk_len;
  options.force = force;
  return options;
}

// CFB8 decryption (parallel) on two workers: a job runs one worker per MiB
// of input, so its 1 MiB + 5 runs on one. Byte CFB is slow in OpenSSL: this
// size is run on this one configuration only. (CFB1, eight times slower,
// runs on one worker here: its chunks' start states are checked all the
// same, and the engine's several workers by every other mode.)
constexpr std::uint64_t kTwoWorkersCfbSize = (2u << 20) + 5;

std::vector<Config> configs_for(std::uint64_t size) {
  if (size == kTwoWorkersCfbSize) return {{EngineKind::threads, 2, ChunkPlan::kDefaultChunkLen}};
  std::vector<Config> configs{{EngineKind::serial, 1, ChunkPlan::kDefaultChunkLen}};
  // Tiny chunks make a multi-MiB run cost millions of cipher re-inits; they
  // are crossed with the small sizes only.
  const std::vector<std::uint64_t> chunk_lens =
      size <= 4096 ? std::vector<std::uint64_t>{16, 48, 1008, ChunkPlan::kDefaultChunkLen}
                   : std::vector<std::uint64_t>{1008, 65536, ChunkPlan::kDefaultChunkLen};
  for (unsigned threads : {1u, 2u, 3u, 7u}) {
    for (std::uint64_t chunk : chunk_lens) configs.push_back({EngineKind::threads, threads, chunk});
  }
  return configs;
}

// The workers the threads engine runs `config` on for `size` bytes of `spec`.
unsigned workers_of(const CipherSpec& spec, const Config& config, std::uint64_t size) {
  return make_engine(config.engine, config.threads)->workers_for(ChunkPlan(spec, config.chunk_len, BackendChoice{}), size);
}

std::vector<std::uint64_t> sizes_for(Mode mode, Direction direction) {
  // 0..17 cover empty, partial, exact and one-past blocks; 1008*k +- 1 and
  // 65536 + 1 straddle chunk boundaries; the MiB sizes are odd on purpose.
  // Only the MiB sizes start more than one worker (one per MiB of input):
  // 3 MiB + 5 (and + 48) run on 2 and 3 workers, kTwoWorkersCfbSize on 2.
  std::vector<std::uint64_t> sizes{0, 1, 15, 16, 17, 31, 33, 47, 48, 49, 1007, 1008, 1009, 2017,
                                   65535, 65536, 65537, 200003};
  const bool slow_cfb = mode == Mode::cfb1 || mode == Mode::cfb8;
  sizes.push_back(slow_cfb ? (1u << 20) + 5 : (3u << 20) + 5);
  if (mode == Mode::cfb8 && is_parallel(mode, direction)) sizes.push_back(kTwoWorkersCfbSize);
  // Whole blocks for what takes only those (padded modes' decryption and
  // unpadded runs): 3 MiB + 5 is skipped there.
  if (mode_is_padded(mode)) sizes.push_back((3u << 20) + 48);
  return sizes;
}

using Param = std::tuple<std::string, Mode, unsigned, Direction>;

class Oracle : public ::testing::TestWithParam<Param> {};

TEST_P(Oracle, InMemoryMatchesOpensslOneShot) {
  const auto [backend, mode, key_bits, direction] = GetParam();
  for (bool padding : {true, false}) {
    if (!padding && !mode_is_padded(mode)) continue;
    const CipherSpec spec = test::make_spec(mode, direction, key_bits, 42, padding);
    for (const std::uint64_t size : sizes_for(mode, direction)) {
      if (mode_is_padded(mode) && (!padding || direction == Direction::decrypt) && size % 16 != 0) continue;
      auto input = test::random_bytes(size, static_cast<std::uint32_t>(size));
      if (direction == Direction::decrypt && padding && mode_is_padded(mode)) {
        // Padded decryption needs real ciphertext: encrypt the input first.
        CipherSpec enc{spec.mode, Direction::encrypt, spec.key.clone(), spec.iv, true};
        input = openssl_oneshot(enc, input);
      }
      const auto expected = openssl_oneshot(spec, input);
      for (const Config& config : configs_for(size)) {
        if (size >= (2u << 20) && config.threads > 1 && is_parallel(mode, direction)) {
          ASSERT_GE(workers_of(spec, config, input.size()), 2u) << "size " << size << " runs on one worker";
        }
        std::vector<std::uint8_t> out(input.size() + kBlockLen);
        const TransformOptions options = options_for(backend, config.engine, config.threads, config.chunk_len, false);
        out.resize(transform_memory(spec, out, input, options));
        ASSERT_EQ(out, expected) << "size " << input.size() << " engine " << engine_name(config.engine)
                                 << " threads " << config.threads << " chunk " << config.chunk_len
                                 << (padding ? "" : " no-pad");
      }
    }
  }
}

// Through real files: pread/pwrite workers for parallel plans and the
// reader/cipher/writer pipeline for sequential ones. A job runs one worker
// per MiB of input: 3 MiB + 37 is the size that runs on several (2 and 3;
// CFB8's 2 MiB + 37 on 2), each reading its chunk's lookback itself. CFB1,
// slow in OpenSSL, runs on one worker here, as in memory (kTwoWorkersCfbSize).
TEST_P(Oracle, FilesMatchOpensslOneShot) {
  const auto [backend, mode, key_bits, direction] = GetParam();
  const CipherSpec spec = test::make_spec(mode, direction, key_bits, 7);
  const auto dir = std::filesystem::temp_directory_path() /
                   ("paes-oracle-" + std::to_string(::getpid()) + "-" + backend + std::string(mode_name(mode)) +
                    std::to_string(key_bits) + std::string(direction_name(direction)));
  std::filesystem::create_directories(dir);
  std::vector<std::uint64_t> sizes{0, 17, 100000, (1u << 20) + 37};
  if (mode == Mode::cfb8) sizes.push_back((2u << 20) + 37);  // slow too: two workers are enough
  if (mode != Mode::cfb1 && mode != Mode::cfb8) sizes.push_back((3u << 20) + 37);
  for (const std::uint64_t size : sizes) {
    auto input = test::random_bytes(size, static_cast<std::uint32_t>(size) + 9);
    if (direction == Direction::decrypt && mode_is_padded(mode)) {
      CipherSpec enc{spec.mode, Direction::encrypt, spec.key.clone(), spec.iv, true};
      input = openssl_oneshot(enc, input);
    }
    const auto expected = openssl_oneshot(spec, input);
    const auto in_path = dir / "in";
    std::ofstream(in_path, std::ios::binary).write(reinterpret_cast<const char*>(input.data()),
                                                   static_cast<std::streamsize>(input.size()));
    for (const Config& config : {Config{EngineKind::serial, 1, 4096}, Config{EngineKind::threads, 2, 4096},
                                 Config{EngineKind::threads, 3, 65536}, Config{EngineKind::threads, 7, 1008}}) {
      if (size >= (2u << 20) && config.threads > 1 && is_parallel(mode, direction)) {
        ASSERT_GE(workers_of(spec, config, input.size()), 2u) << "size " << size << " runs on one worker";
      }
      const auto out_path = dir / "out";
      const TransformOptions options = options_for(backend, config.engine, config.threads, config.chunk_len, true);
      const TransformReport report = transform_file(spec, in_path, out_path, options);
      std::ifstream file(out_path, std::ios::binary);
      const std::vector<std::uint8_t> got{std::istreambuf_iterator<char>(file), {}};
      ASSERT_EQ(got, expected) << "size " << input.size() << " threads " << config.threads
                               << " chunk " << config.chunk_len;
      EXPECT_EQ(report.bytes_out, expected.size());
      EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 2) << "a temporary was left";
    }
  }
  std::filesystem::remove_all(dir);
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto [backend, mode, key_bits, direction] = info.param;
  return test::backend_test_name(backend) + "_" + std::string(mode_name(mode)) + "_" + std::to_string(key_bits) +
         "_" + std::string(direction_name(direction));
}

// Every mode, key size and direction on each available backend that runs it.
std::vector<Param> all_params() {
  std::vector<Param> params;
  for (const std::string& backend : test::available_backends()) {
    for (Mode mode : kAllModes) {
      for (unsigned key_bits : {128u, 192u, 256u}) {
        for (Direction direction : {Direction::encrypt, Direction::decrypt}) {
          if (test::backend_runs(backend, mode, direction)) params.emplace_back(backend, mode, key_bits, direction);
        }
      }
    }
  }
  return params;
}

INSTANTIATE_TEST_SUITE_P(AllModes, Oracle, ::testing::ValuesIn(all_params()), param_name);

// Counters whose low 32 or 64 bits, or all 128, are about to wrap: chunks of
// one or two blocks make every boundary fall between chunks. For each backend
// (ipsec-mb carries in the low 32 bits only; paes splits its work there).
void expect_ctr_carries_match(const std::string& backend) {
  for (const int ff_bytes : {4, 8, 16}) {
    for (const unsigned key_bits : {128u, 256u}) {
      CipherSpec spec = test::make_spec(Mode::ctr, Direction::encrypt, key_bits, 11);
      for (int i = 0; i < ff_bytes; ++i) spec.iv[kBlockLen - 1 - static_cast<std::size_t>(i)] = 0xff;
      spec.iv[kBlockLen - 1] = 0xfd;  // wrap after three blocks
      const auto input = test::random_bytes(16 * 9 + 5, 12);
      const auto expected = openssl_oneshot(spec, input);
      for (const std::uint64_t chunk : {16u, 32u, 48u, 1u << 20}) {
        for (const unsigned threads : {1u, 3u}) {
          std::vector<std::uint8_t> out(input.size());
          transform_memory(spec, out, input, options_for(backend, EngineKind::threads, threads, chunk, false));
          EXPECT_EQ(out, expected) << backend << ": " << ff_bytes << " ff bytes, chunk " << chunk;
        }
      }
    }
  }
}

TEST(CtrCarry, ChunksAcrossEveryWrapPointMatchOpenssl) {
  for (const std::string& backend : test::available_backends()) expect_ctr_carries_match(backend);
}

}  // namespace
}  // namespace paes
