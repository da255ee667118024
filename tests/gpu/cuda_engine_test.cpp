// The CUDA engine against OpenSSL: every supported mode, direction and key
// size, sizes from 0 to several MiB, batches small enough that a message
// spans many of them (and every stream), pieces and chunks that start
// mid-message, and CTR counters that wrap at 32, 64 and 128 bits.
//
// Without a CUDA device (or driver) every test that needs one skips, saying
// why; one test then checks instead that the engine refuses to start with the
// message a user would see.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "cipher/oneshot.hpp"
#include "engine/gpu/cuda_engine.hpp"
#include "engine_batch_checks.hpp"
#include "paes/error.hpp"
#include "test_support.hpp"
#include "paes/plan.hpp"

namespace paes {
namespace {


using test::make_spec;
using test::random_bytes;

CipherSpec with_direction(const CipherSpec& spec, Direction direction) {
  CipherSpec other;
  other.mode = spec.mode;
  other.direction = direction;
  other.key = spec.key.clone();
  other.iv = spec.iv;
  other.padding = spec.padding;
  return other;
}

std::string describe(const CipherSpec& spec, std::size_t len) {
  return std::string(mode_name(spec.mode)) + "-" + std::to_string(spec.key_bits()) + " " +
         std::string(direction_name(spec.direction)) + (spec.padded() ? "" : " nopad") + " " +
         std::to_string(len) + " bytes";
}

// Why there is no device to test on: the engine's own refusal, which is
// what `paes --engine cuda` prints on such a machine.
std::string no_device_reason() {
  try {
    CudaEngine engine;
  } catch (const Error& e) {
    return e.what();
  }
  return "CUDA: no CUDA device found";
}

// Engines shared by the suite. `small` has 4 KiB batches, 3 blocks per
// thread and 32-thread blocks, so a few MiB make hundreds of batches over its
// streams and every chaining rule between them is exercised, and grid-stride
// loops go round many times.
struct Engines {
  std::string skip_reason;
  std::unique_ptr<CudaEngine> standard;
  std::unique_ptr<CudaEngine> small;
};

Engines& engines() {
  static Engines e = [] {
    Engines out;
    if (list_cuda_devices().empty()) {
      out.skip_reason = no_device_reason();
      return out;
    }
    out.standard = std::make_unique<CudaEngine>();
    CudaOptions opts;
    opts.batch_bytes = 4096;
    opts.blocks_per_thread = 3;
    opts.threads_per_block = 32;
    opts.streams = 2;
    out.small = std::make_unique<CudaEngine>(opts);
    return out;
  }();
  return e;
}

class CudaEngineTest : public testing::Test {
 protected:
  void SetUp() override {
    if (!engines().skip_reason.empty()) GTEST_SKIP() << engines().skip_reason;
  }
};

// Runs `spec` over `in` on the engine and through OpenSSL: both must throw,
// or both must give the same bytes.
void expect_same_as_openssl(CudaEngine& engine, const CipherSpec& spec,
                            const std::vector<std::uint8_t>& in) {
  SCOPED_TRACE(describe(spec, in.size()));
  std::vector<std::uint8_t> expected;
  bool openssl_threw = false;
  try {
    expected = openssl_oneshot(spec, in);
  } catch (const Error&) {
    openssl_threw = true;
  }
  std::vector<std::uint8_t> got(in.size() + kBlockLen);
  if (openssl_threw) {
    EXPECT_THROW(engine.transform(spec, got.data(), in.data(), in.size()), Error);
    return;
  }
  const std::size_t n = engine.transform(spec, got.data(), in.data(), in.size());
  got.resize(n);
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_TRUE(got == expected) << "output differs from OpenSSL";
}

struct ModeDir {
  Mode mode;
  Direction direction;
};
constexpr ModeDir kSupported[] = {
    {Mode::ecb, Direction::encrypt}, {Mode::ecb, Direction::decrypt},
    {Mode::ctr, Direction::encrypt}, {Mode::ctr, Direction::decrypt},
    {Mode::cbc, Direction::decrypt}, {Mode::cfb128, Direction::decrypt},
};
constexpr unsigned kKeyBits[] = {128, 192, 256};
constexpr std::size_t kSizes[] = {0, 1, 15, 16, 17, 4096 + 5, (3u << 20) + 7, (5u << 20) + 16};

// Input for a decryption test: for padded modes, a valid ciphertext of a
// plaintext of `len` bytes (so the padding check passes); otherwise `len`
// random bytes.
std::vector<std::uint8_t> input_for(const CipherSpec& spec, std::size_t len, std::uint32_t seed) {
  auto data = random_bytes(len, seed);
  if (spec.direction == Direction::decrypt && spec.padded()) {
    return openssl_oneshot(with_direction(spec, Direction::encrypt), data);
  }
  return data;
}

TEST(CudaEngineNoDevice, RefusesWithAClearMessage) {
  if (!list_cuda_devices().empty()) GTEST_SKIP() << "a CUDA device is present";
  try {
    CudaEngine engine;
    ADD_FAILURE() << "the engine started without a CUDA device";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::failure);
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
  }
  // `paes info` still works: it lists nothing and names the versions.
  EXPECT_NE(cuda_version_string().find("runtime "), std::string::npos);
}

TEST(CudaEngineOptions, BadThreadsPerBlockIsAUsageError) {
  CudaOptions opts;
  opts.threads_per_block = 100;
  try {
    CudaEngine engine(opts);
    ADD_FAILURE() << "100 threads per block was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
  }
}

TEST(CudaEngineSupport, ParallelDirectionsOnly) {
  for (const Mode mode : kAllModes) {
    for (const Direction d : {Direction::encrypt, Direction::decrypt}) {
      const CipherSpec spec = make_spec(mode, d, 128, 3);
      const bool parallel = mode == Mode::ecb || mode == Mode::ctr ||
                            (d == Direction::decrypt && (mode == Mode::cbc || mode == Mode::cfb128));
      EXPECT_EQ(CudaEngine::supports(spec), parallel) << describe(spec, 0);
    }
  }
}

TEST_F(CudaEngineTest, EveryModeDirectionKeyAndSizeMatchesOpenSsl) {
  std::uint32_t seed = 1;
  for (const ModeDir& md : kSupported) {
    for (unsigned bits : kKeyBits) {
      for (bool padding : {true, false}) {
        if (!padding && md.mode != Mode::ecb && md.mode != Mode::cbc) continue;
        const CipherSpec spec = make_spec(md.mode, md.direction, bits, seed++, padding);
        for (std::size_t len : kSizes) {
          const auto in = input_for(spec, len, seed++);
          expect_same_as_openssl(*engines().standard, spec, in);
          expect_same_as_openssl(*engines().small, spec, in);
        }
      }
    }
  }
}

TEST_F(CudaEngineTest, BadPaddedInputsFailLikeOpenSsl) {
  for (Mode mode : {Mode::ecb, Mode::cbc}) {
    const CipherSpec spec = make_spec(mode, Direction::decrypt, 128, 7);
    // Empty, not whole blocks, and whole blocks that decrypt to bad padding.
    for (std::size_t len : {0u, 17u, 32u, 4096u}) {
      expect_same_as_openssl(*engines().standard, spec, random_bytes(len, 99));
    }
    // --no-pad takes whole blocks only, both ways.
    for (Direction d : {Direction::encrypt, Direction::decrypt}) {
      if (mode == Mode::cbc && d == Direction::encrypt) continue;
      const CipherSpec nopad = make_spec(mode, d, 256, 8, false);
      expect_same_as_openssl(*engines().small, nopad, random_bytes(33, 5));
    }
  }
}

TEST_F(CudaEngineTest, CtrCounterWrapsAt32And64And128Bits) {
  for (std::size_t ones : {4u, 8u, 16u}) {
    for (unsigned bits : kKeyBits) {
      CipherSpec spec =
          make_spec(Mode::ctr, Direction::encrypt, bits, 40 + static_cast<std::uint32_t>(ones));
      // The counter's last `ones` bytes are ff, less a few blocks, so the
      // carry happens inside the message and (with 4 KiB batches) inside and
      // across batches.
      for (std::size_t i = kBlockLen - ones; i < kBlockLen; ++i) spec.iv[i] = 0xff;
      spec.iv[kBlockLen - 1] = 0xfd;
      for (std::size_t len : {std::size_t{64}, std::size_t{4096 * 3 + 9}}) {
        const auto in = random_bytes(len, 3);
        expect_same_as_openssl(*engines().standard, spec, in);
        expect_same_as_openssl(*engines().small, spec, in);
        expect_same_as_openssl(*engines().small, with_direction(spec, Direction::decrypt), in);
      }
    }
  }
}

// A message fed in pieces (whole blocks until the final one), in place, must
// equal the one-shot result: the engine carries the CTR block index and the
// CBC/CFB chaining block from piece to piece.
TEST_F(CudaEngineTest, PiecesInPlaceEqualOneShot) {
  const std::size_t len = 70000 + 9;
  std::uint32_t seed = 500;
  for (const ModeDir& md : kSupported) {
    for (unsigned bits : kKeyBits) {
      const CipherSpec spec = make_spec(md.mode, md.direction, bits, seed++);
      const auto in = input_for(spec, len, seed++);
      SCOPED_TRACE(describe(spec, in.size()));
      const auto expected = openssl_oneshot(spec, in);
      for (CudaEngine* engine : {engines().standard.get(), engines().small.get()}) {
        std::vector<std::uint8_t> buf(in.size() + kBlockLen);
        std::copy(in.begin(), in.end(), buf.begin());
        engine->begin(spec, spec.iv);
        std::size_t off = 0;
        std::size_t produced = 0;
        for (std::size_t piece : {16u * 3, 16u * 1000, 16u, 16u * 257}) {
          produced += engine->update(buf.data() + off, buf.data() + off, piece, false);
          off += piece;
        }
        produced += engine->update(buf.data() + off, buf.data() + off, in.size() - off, true);
        buf.resize(produced);
        EXPECT_TRUE(buf == expected);
      }
    }
  }
}

// A chunk that starts mid-message, begun with the state the plan gives it
// (ChunkPlan::start_state), equals that stretch of the one-shot output.
TEST_F(CudaEngineTest, ChunkStartingMidMessage) {
  const std::size_t len = 50000;
  const std::size_t start_block = 1001;
  for (const ModeDir& md : kSupported) {
    if (md.mode == Mode::ecb) continue;
    const CipherSpec spec = make_spec(md.mode, md.direction, 192, 77, false);
    const auto in = random_bytes(len, 78);
    const auto expected = openssl_oneshot(spec, in);
    Block state{};
    if (md.mode == Mode::ctr) {
      state = add_to_counter(spec.iv, start_block);
    } else {
      std::copy_n(in.begin() + (start_block - 1) * kBlockLen, kBlockLen, state.begin());
    }
    const std::size_t off = start_block * kBlockLen;
    std::vector<std::uint8_t> out(len - off);
    engines().small->begin(spec, state);
    const std::size_t n = engines().small->update(out.data(), in.data() + off, len - off, true);
    ASSERT_EQ(n, len - off);
    EXPECT_TRUE(
        std::equal(out.begin(), out.end(), expected.begin() + static_cast<std::ptrdiff_t>(off)))
        << describe(spec, len);
  }
}

TEST_F(CudaEngineTest, EveryBatchIsCheckedAgainstOpenSsl) {
  test::expect_every_batch_checked(*engines().small);
}

TEST_F(CudaEngineTest, SequentialDirectionsAreRefused) {
  for (Mode mode : {Mode::cbc, Mode::cfb128, Mode::cfb8, Mode::cfb1, Mode::ofb}) {
    const CipherSpec spec = make_spec(mode, Direction::encrypt, 128, 3);
    try {
      engines().standard->begin(spec, spec.iv);
      ADD_FAILURE() << "begin() accepted " << mode_name(mode) << " encryption";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage);
    }
  }
}

TEST_F(CudaEngineTest, NonFinalPiecesMustBeWholeBlocks) {
  const CipherSpec spec = make_spec(Mode::ctr, Direction::encrypt, 128, 3);
  std::vector<std::uint8_t> buf(64);
  engines().standard->begin(spec, spec.iv);
  EXPECT_THROW(engines().standard->update(buf.data(), buf.data(), 17, false), Error);
}

TEST_F(CudaEngineTest, DeviceListAndSelection) {
  const auto devices = list_cuda_devices();
  ASSERT_FALSE(devices.empty());
  for (std::size_t i = 0; i < devices.size(); ++i) {
    EXPECT_EQ(devices[i].index, i);
    EXPECT_FALSE(devices[i].name.empty());
    EXPECT_GT(devices[i].multiprocessors, 0u);
    EXPECT_GE(devices[i].compute_major, 3);
  }
  EXPECT_NE(cuda_version_string().find("driver "), std::string::npos);
  CudaOptions opts;
  opts.device_index = static_cast<unsigned>(devices.size());
  try {
    CudaEngine bad(opts);
    ADD_FAILURE() << "a device index past the end was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("--device"), std::string::npos);
  }
}

// Several engines on one device in one process: the round keys travel with
// each launch, so interleaved messages under different keys stay apart.
TEST_F(CudaEngineTest, InterleavedEnginesKeepTheirKeys) {
  const CipherSpec a = make_spec(Mode::ctr, Direction::encrypt, 128, 11);
  const CipherSpec b = make_spec(Mode::ecb, Direction::decrypt, 256, 12, false);
  const auto in = random_bytes(64 * 1024, 13);
  std::vector<std::uint8_t> out_a(in.size());
  std::vector<std::uint8_t> out_b(in.size());
  engines().standard->begin(a, a.iv);
  engines().small->begin(b, b.iv);
  const std::size_t half = in.size() / 2;
  engines().standard->update(out_a.data(), in.data(), half, false);
  engines().small->update(out_b.data(), in.data(), half, false);
  engines().standard->update(out_a.data() + half, in.data() + half, in.size() - half, true);
  engines().small->update(out_b.data() + half, in.data() + half, in.size() - half, true);
  EXPECT_TRUE(out_a == openssl_oneshot(a, in));
  EXPECT_TRUE(out_b == openssl_oneshot(b, in));
}

TEST_F(CudaEngineTest, ProfilingFillsStats) {
  CudaOptions opts;
  opts.profile = true;
  opts.device_index = engines().standard->device().index;
  CudaEngine engine(opts);
  const CipherSpec spec = make_spec(Mode::ctr, Direction::encrypt, 128, 5);
  const auto in = random_bytes(1 << 20, 6);
  std::vector<std::uint8_t> out(in.size());
  engine.transform(spec, out.data(), in.data(), in.size());
  EXPECT_EQ(engine.stats().bytes, in.size());
  EXPECT_GE(engine.stats().batches, 1u);
  EXPECT_GT(engine.stats().kernel_seconds, 0.0);
  EXPECT_GT(engine.stats().write_seconds, 0.0);
  EXPECT_GT(engine.stats().read_seconds, 0.0);
  EXPECT_TRUE(out == openssl_oneshot(spec, in));
}

}  // namespace
}  // namespace paes
