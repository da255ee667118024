// The checks the GPU cipher backend runs on its devices' output
// (cipher/gpu/gpu_check.hpp), without a device: the self-test against fake
// devices that are right, or wrong in exactly one kernel, key size or byte;
// the per-batch check against OpenSSL's output split into batches as a
// lane's cipher splits a chunk, intact and with blocks corrupted. That the
// backend calls these on every batch is checked by gpu_backend_test.cpp (a
// device that goes wrong on one batch inside a chunk of a job,
// ADeviceThatComputesWronglyIsCaught) and, with a device's output corrupted
// for real, by tests/gpu/test_gpu_cli.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cipher/oneshot.hpp"
#include "cipher/gpu/gpu_check.hpp"
#include "paes/error.hpp"
#include "paes/plan.hpp"
#include "test_support.hpp"

namespace paes {
namespace {

using test::make_spec;
using test::random_bytes;

constexpr const char* kDevice = "Test device 7 (fake)";

struct ModeDir {
  Mode mode;
  Direction direction;
  const char* name;  // as the check's messages say it
};
constexpr ModeDir kKernels[] = {
    {Mode::ecb, Direction::encrypt, "ECB encryption"}, {Mode::ecb, Direction::decrypt, "ECB decryption"},
    {Mode::ctr, Direction::encrypt, "CTR encryption"}, {Mode::ctr, Direction::decrypt, "CTR decryption"},
    {Mode::cbc, Direction::decrypt, "CBC decryption"}, {Mode::cfb128, Direction::decrypt, "CFB decryption"},
};
constexpr unsigned kKeyBits[] = {128, 192, 256};

std::size_t openssl_device(const CipherSpec& spec, std::uint8_t* out, const std::uint8_t* in,
                           std::size_t len) {
  return openssl_oneshot_into(spec, out, {in, len});
}

void expect_error_containing(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no Error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::failure);
    for (const auto& part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(GpuSelfTest, PassesOnAnAesThatIsRight) {
  // Also checks the embedded SP 800-38A vectors against OpenSSL.
  EXPECT_NO_THROW(gpu::run_self_test(openssl_device, kDevice));
}

TEST(GpuSelfTest, CatchesAWrongKeySchedule) {
  auto wrong_key = [](const CipherSpec& spec, std::uint8_t* out, const std::uint8_t* in, std::size_t len) {
    CipherSpec other;
    other.mode = spec.mode;
    other.direction = spec.direction;
    other.key = spec.key.clone();
    other.key.data()[0] ^= 0x01;
    other.iv = spec.iv;
    other.padding = spec.padding;
    return openssl_device(other, out, in, len);
  };
  expect_error_containing([&] { gpu::run_self_test(wrong_key, kDevice); },
                          {kDevice, "failed its AES self-test", "run on a CPU backend"});
}

// The backend's own batch check may see a wrong answer first, throwing
// WrongGpuOutput from inside the transform: the message still says it was
// the self-test. Any other error (a failing driver call) passes through.
TEST(GpuSelfTest, SaysSelfTestWhenTheBatchCheckSawItFirst) {
  auto batch_check_fails = [](const CipherSpec&, std::uint8_t*, const std::uint8_t*, std::size_t) -> std::size_t {
    throw gpu::WrongGpuOutput("block 0 is wrong");
  };
  expect_error_containing([&] { gpu::run_self_test(batch_check_fails, kDevice); },
                          {kDevice, "failed its AES self-test"});
  auto driver_fails = [](const CipherSpec&, std::uint8_t*, const std::uint8_t*, std::size_t) -> std::size_t {
    throw Error("OpenCL: clFinish failed: CL_OUT_OF_RESOURCES");
  };
  expect_error_containing([&] { gpu::run_self_test(driver_fails, kDevice); }, {"CL_OUT_OF_RESOURCES"});
}

// A device wrong in one kernel and key size only, in the last byte of its
// output (for CTR and CFB, the partial last block): the self-test must cover
// every kernel the backend launches, at every key size, to its last byte.
TEST(GpuSelfTest, CoversEveryKernelAndKeySize) {
  for (const ModeDir& k : kKernels) {
    if (k.mode == Mode::ctr && k.direction == Direction::decrypt) continue;  // the CTR kernel again
    for (unsigned bits : kKeyBits) {
      SCOPED_TRACE(std::string(k.name) + " AES-" + std::to_string(bits));
      auto wrong_once = [&](const CipherSpec& spec, std::uint8_t* out, const std::uint8_t* in, std::size_t len) {
        const std::size_t n = openssl_device(spec, out, in, len);
        if (spec.mode == k.mode && spec.direction == k.direction && spec.key_bits() == bits && n > 0) {
          out[n - 1] ^= 0x80;
        }
        return n;
      };
      expect_error_containing([&] { gpu::run_self_test(wrong_once, kDevice); },
                              {kDevice, std::string(k.name) + " with AES-" + std::to_string(bits)});
    }
  }
}

// What a GPU RawCipher does around one chunk: begin, then for each batch take
// the sample while the input is staged, chain from its last block, and
// verify once the "device" output is back.
void check_batches(gpu::BatchCheck& check, const CipherSpec& spec, const Block& start,
                   const std::uint8_t* in, const std::uint8_t* device_out, std::size_t len,
                   std::size_t batch) {
  check.begin(spec, start);
  Block chain = start;
  for (std::size_t off = 0; off < len; off += batch) {
    const std::size_t n = std::min(batch, len - off);
    const gpu::BatchSample sample = check.sample(in + off, n, off / kBlockLen, chain);
    if (n >= kBlockLen) std::memcpy(chain.data(), in + off + n - kBlockLen, kBlockLen);
    check.verify(sample, device_out + off);
  }
}

std::size_t message_len(Mode mode) {
  // Ten 4 KiB batches and a bit; ECB and CBC take whole blocks only.
  return mode == Mode::ecb || mode == Mode::cbc ? 10 * 4096 + 48 : 10 * 4096 + 7;
}

TEST(GpuBatchCheck, RightOutputPassesInEveryModeKeySizeAndBatchSize) {
  gpu::BatchCheck check(kDevice);
  std::uint32_t seed = 10;
  for (const ModeDir& k : kKernels) {
    for (unsigned bits : kKeyBits) {
      const CipherSpec spec = make_spec(k.mode, k.direction, bits, seed++, false);
      const auto in = random_bytes(message_len(k.mode), seed++);
      const auto out = openssl_oneshot(spec, in);
      // One block a batch (first = last), a few, many; a batch size that
      // leaves a short last batch.
      for (std::size_t batch : {std::size_t{16}, std::size_t{48}, std::size_t{4096}, std::size_t{4096 * 3 + 16}}) {
        SCOPED_TRACE(std::string(k.name) + " AES-" + std::to_string(bits) + " batch " + std::to_string(batch));
        EXPECT_NO_THROW(check_batches(check, spec, spec.iv, in.data(), out.data(), in.size(), batch));
      }
    }
  }
}

// A chunk that starts mid-message is begun with the plan's start state
// (the counter of its first block, or the ciphertext block before it).
TEST(GpuBatchCheck, ChunkStartingMidMessagePasses) {
  gpu::BatchCheck check(kDevice);
  const std::size_t start_block = 1001;
  for (const ModeDir& k : kKernels) {
    if (k.mode == Mode::ecb) continue;
    const CipherSpec spec = make_spec(k.mode, k.direction, 192, 77, false);
    const auto in = random_bytes(50000, 78);
    const auto out = openssl_oneshot(spec, in);
    Block state{};
    if (k.mode == Mode::ctr) {
      state = add_to_counter(spec.iv, start_block);
    } else {
      std::copy_n(in.begin() + (start_block - 1) * kBlockLen, kBlockLen, state.begin());
    }
    const std::size_t off = start_block * kBlockLen;
    SCOPED_TRACE(k.name);
    EXPECT_NO_THROW(check_batches(check, spec, state, in.data() + off, out.data() + off, in.size() - off, 4096));
  }
}

// One bit wrong in the first block of a batch, in its last, or in the last
// (partial) byte of the message: each is one of the blocks always checked.
TEST(GpuBatchCheck, WrongFirstOrLastBlockOfABatchIsCaught) {
  gpu::BatchCheck check(kDevice);
  const std::size_t batch = 4096;
  for (const ModeDir& k : kKernels) {
    const CipherSpec spec = make_spec(k.mode, k.direction, 256, 5, false);
    const auto in = random_bytes(message_len(k.mode), 6);
    const auto right = openssl_oneshot(spec, in);
    const std::size_t third_batch = 2 * batch;
    for (std::size_t wrong_byte : {third_batch + 3, third_batch + batch - 1, in.size() - 1}) {
      SCOPED_TRACE(std::string(k.name) + " wrong byte " + std::to_string(wrong_byte));
      auto out = right;
      out[wrong_byte] ^= 0x04;
      expect_error_containing(
          [&] { check_batches(check, spec, spec.iv, in.data(), out.data(), in.size(), batch); },
          {kDevice, "gave wrong AES output", "block " + std::to_string(wrong_byte / kBlockLen), k.name,
           "run on a CPU backend"});
    }
  }
}

// A block inside a batch is checked when the random pick falls on it: over
// enough batches, a device wrong in one work-item's block is caught.
TEST(GpuBatchCheck, RandomPickReachesBlocksInsideABatch) {
  gpu::BatchCheck check(kDevice);
  const CipherSpec spec = make_spec(Mode::ctr, Direction::encrypt, 128, 9, false);
  const auto in = random_bytes(64 * kBlockLen, 10);
  auto out = openssl_oneshot(spec, in);
  out[37 * kBlockLen + 5] ^= 0x01;
  check.begin(spec, spec.iv);
  // The chance of never picking block 37 of 64 in 5000 batches is e^-78.
  bool caught = false;
  for (int i = 0; i < 5000 && !caught; ++i) {
    const gpu::BatchSample sample = check.sample(in.data(), in.size(), 0, spec.iv);
    try {
      check.verify(sample, out.data());
    } catch (const Error& e) {
      caught = true;
      EXPECT_NE(std::string(e.what()).find("block 37 "), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(caught);
}

}  // namespace
}  // namespace paes
