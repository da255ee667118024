// The OpenCL engine against OpenSSL: every supported mode, direction and key
// size, sizes from 0 to several MiB, batches small enough that a message
// spans many of them, pieces and chunks that start mid-message, and CTR
// counters that wrap at 32, 64 and 128 bits. Runs on whatever device the ICD
// loader offers (PoCL's CPU device in CI); skips, saying why, when none.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cipher/oneshot.hpp"
#include "engine/gpu/opencl_engine.hpp"
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

// Engines shared by the suite: building the program costs PoCL a second or
// two. `small` has 4 KiB batches, so a few MiB make hundreds of batches and
// every chaining rule between them is exercised.
struct Engines {
  std::string skip_reason;
  std::unique_ptr<OpenClEngine> standard;
  std::unique_ptr<OpenClEngine> small;
};

Engines& engines() {
  static Engines e = [] {
    Engines out;
    if (list_opencl_devices().empty()) {
      out.skip_reason =
          "no OpenCL device found (no ICD platform with a device; install pocl-opencl-icd "
          "for a CPU device)";
      return out;
    }
    out.standard = std::make_unique<OpenClEngine>();
    OpenClOptions opts;
    opts.batch_bytes = 4096;
    opts.blocks_per_item = 3;
    opts.local_size = 16;
    out.small = std::make_unique<OpenClEngine>(opts);
    return out;
  }();
  return e;
}

class OpenClEngineTest : public testing::Test {
 protected:
  void SetUp() override {
    if (!engines().skip_reason.empty()) GTEST_SKIP() << engines().skip_reason;
  }
};

// Runs `spec` over `in` on the engine and through OpenSSL: both must throw,
// or both must give the same bytes.
void expect_same_as_openssl(OpenClEngine& engine, const CipherSpec& spec,
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
constexpr std::size_t kSizes[] = {0, 1, 15, 16, 17, 4096 + 5, (3u << 20) + 7};

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

TEST_F(OpenClEngineTest, EveryModeDirectionKeyAndSizeMatchesOpenSsl) {
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

TEST_F(OpenClEngineTest, BadPaddedInputsFailLikeOpenSsl) {
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

TEST_F(OpenClEngineTest, CtrCounterWrapsAt32And64And128Bits) {
  for (std::size_t ones : {4u, 8u, 16u}) {
    for (unsigned bits : kKeyBits) {
      CipherSpec spec = make_spec(Mode::ctr, Direction::encrypt, bits, 40 + static_cast<std::uint32_t>(ones));
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
TEST_F(OpenClEngineTest, PiecesInPlaceEqualOneShot) {
  const std::size_t len = 70000 + 9;
  std::uint32_t seed = 500;
  for (const ModeDir& md : kSupported) {
    for (unsigned bits : kKeyBits) {
      const CipherSpec spec = make_spec(md.mode, md.direction, bits, seed++);
      const auto in = input_for(spec, len, seed++);
      SCOPED_TRACE(describe(spec, in.size()));
      const auto expected = openssl_oneshot(spec, in);
      for (OpenClEngine* engine : {engines().standard.get(), engines().small.get()}) {
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
TEST_F(OpenClEngineTest, ChunkStartingMidMessage) {
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
    EXPECT_TRUE(std::equal(out.begin(), out.end(), expected.begin() + static_cast<std::ptrdiff_t>(off)))
        << describe(spec, len);
  }
}

TEST_F(OpenClEngineTest, EveryBatchIsCheckedAgainstOpenSsl) {
  test::expect_every_batch_checked(*engines().small);
}

TEST_F(OpenClEngineTest, SequentialDirectionsAreRefused) {
  for (Mode mode : {Mode::cbc, Mode::cfb128, Mode::cfb8, Mode::cfb1, Mode::ofb}) {
    const CipherSpec spec = make_spec(mode, Direction::encrypt, 128, 3);
    EXPECT_FALSE(OpenClEngine::supports(spec));
    try {
      engines().standard->begin(spec, spec.iv);
      ADD_FAILURE() << "begin() accepted " << mode_name(mode) << " encryption";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage);
    }
  }
  EXPECT_FALSE(OpenClEngine::supports(make_spec(Mode::ofb, Direction::decrypt, 128, 3)));
  EXPECT_FALSE(OpenClEngine::supports(make_spec(Mode::cfb8, Direction::decrypt, 128, 3)));
}

TEST_F(OpenClEngineTest, NonFinalPiecesMustBeWholeBlocks) {
  const CipherSpec spec = make_spec(Mode::ctr, Direction::encrypt, 128, 3);
  std::vector<std::uint8_t> buf(64);
  engines().standard->begin(spec, spec.iv);
  EXPECT_THROW(engines().standard->update(buf.data(), buf.data(), 17, false), Error);
}

TEST_F(OpenClEngineTest, DeviceListAndSelection) {
  const auto devices = list_opencl_devices();
  ASSERT_FALSE(devices.empty());
  for (std::size_t i = 0; i < devices.size(); ++i) {
    EXPECT_EQ(devices[i].index, i);
    EXPECT_FALSE(devices[i].name.empty());
    EXPECT_FALSE(devices[i].platform.empty());
  }
  OpenClOptions opts;
  opts.device_index = static_cast<unsigned>(devices.size());
  try {
    OpenClEngine bad(opts);
    ADD_FAILURE() << "a device index past the end was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("--device"), std::string::npos);
  }
  EXPECT_EQ(opencl_error_name(-5), "CL_OUT_OF_RESOURCES");
  EXPECT_EQ(opencl_error_name(-11), "CL_BUILD_PROGRAM_FAILURE");
  EXPECT_EQ(opencl_error_name(-9999), "OpenCL error -9999");
}

TEST_F(OpenClEngineTest, ProfilingFillsStats) {
  OpenClOptions opts;
  opts.profile = true;
  opts.device_index = engines().standard->device().index;
  OpenClEngine engine(opts);
  const CipherSpec spec = make_spec(Mode::ctr, Direction::encrypt, 128, 5);
  const auto in = random_bytes(1 << 20, 6);
  std::vector<std::uint8_t> out(in.size());
  engine.transform(spec, out.data(), in.data(), in.size());
  EXPECT_EQ(engine.stats().bytes, in.size());
  EXPECT_GE(engine.stats().batches, 1u);
  EXPECT_GT(engine.stats().kernel_seconds, 0.0);
  EXPECT_TRUE(out == openssl_oneshot(spec, in));
}

}  // namespace
}  // namespace paes
