// Host tests of the GPU kernel bodies (src/cipher/gpu/aes_kernels.h), run through
// run_host_kernel as a device's work-items would run them: every kernel and
// key size against OpenSSL, batches that start mid-message and end in a
// partial block, block ranges split at odd places (and run by several threads
// at once), and the CTR counter carrying across 2^32 and 2^64 and wrapping at
// 2^128.
#include "support/host_kernels.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cipher/oneshot.hpp"
#include "cipher/gpu/aes_tables.hpp"
#include "cipher/gpu/key_schedule.hpp"
#include "test_support.hpp"

extern "C" void paes_c_ctr_body(std::uint64_t b, const unsigned char* in, unsigned char* out,
                                std::uint64_t nbytes, std::uint64_t first_block,
                                const std::uint32_t* counter0, const std::uint32_t* column,
                                const std::uint32_t* rk, int nr);

namespace paes::gpu {
namespace {

using test::make_spec;
using test::random_bytes;

constexpr Kernel kAllKernels[] = {Kernel::ecb_encrypt, Kernel::ecb_decrypt, Kernel::ctr,
                                  Kernel::cbc_decrypt, Kernel::cfb128_decrypt};
constexpr unsigned kKeyBits[] = {128, 192, 256};
// Written after the batch's last byte; a kernel must leave it alone.
constexpr std::uint8_t kGuard = 0xa5;
constexpr std::size_t kGuardLen = 32;

const char* kernel_name(Kernel kernel) {
  switch (kernel) {
    case Kernel::ecb_encrypt: return "ecb_encrypt";
    case Kernel::ecb_decrypt: return "ecb_decrypt";
    case Kernel::ctr: return "ctr";
    case Kernel::cbc_decrypt: return "cbc_decrypt";
    case Kernel::cfb128_decrypt: return "cfb128_decrypt";
  }
  return "?";
}

bool takes_partial_block(Kernel kernel) {
  return kernel == Kernel::ctr || kernel == Kernel::cfb128_decrypt;
}

// The OpenSSL transform a kernel computes a piece of.
CipherSpec kernel_spec(Kernel kernel, unsigned key_bits, std::uint32_t seed) {
  switch (kernel) {
    case Kernel::ecb_encrypt: return make_spec(Mode::ecb, Direction::encrypt, key_bits, seed, false);
    case Kernel::ecb_decrypt: return make_spec(Mode::ecb, Direction::decrypt, key_bits, seed, false);
    case Kernel::ctr: return make_spec(Mode::ctr, Direction::encrypt, key_bits, seed);
    case Kernel::cbc_decrypt: return make_spec(Mode::cbc, Direction::decrypt, key_bits, seed, false);
    case Kernel::cfb128_decrypt: return make_spec(Mode::cfb128, Direction::decrypt, key_bits, seed);
  }
  throw std::logic_error("unknown kernel");
}

std::array<std::uint32_t, 4> be_words(const std::uint8_t* p) {
  std::array<std::uint32_t, 4> w{};
  for (std::size_t i = 0; i < 4; ++i) {
    w[i] = (std::uint32_t{p[4 * i]} << 24) | (std::uint32_t{p[4 * i + 1]} << 16) |
           (std::uint32_t{p[4 * i + 2]} << 8) | p[4 * i + 3];
  }
  return w;
}

// A batch of a message as the GPU backend hands it to a kernel: message bytes
// [16 * first, 16 * first + nbytes), with the kernel's state for that place.
struct Batch {
  Kernel kernel;
  RoundKeys keys;
  std::vector<std::uint8_t> in;  // exactly nbytes, so that ASan sees any read past them
  std::uint64_t first_block = 0;
  std::array<std::uint32_t, 4> state{};

  Batch(Kernel k, const CipherSpec& spec, const std::vector<std::uint8_t>& message,
        std::uint64_t first, std::size_t nbytes)
      : kernel(k),
        keys(uses_decrypt_keys(k) ? expand_decrypt_key(spec.key.data(), spec.key.size())
                                     : expand_encrypt_key(spec.key.data(), spec.key.size())),
        in(message.begin() + static_cast<std::ptrdiff_t>(16 * first),
           message.begin() + static_cast<std::ptrdiff_t>(16 * first + nbytes)),
        first_block(first) {
    // CTR: the counter of the message's block 0. CBC/CFB: the ciphertext
    // block before the batch. ECB: unused.
    const bool chained = k == Kernel::cbc_decrypt || k == Kernel::cfb128_decrypt;
    state = chained && first > 0 ? be_words(message.data() + 16 * (first - 1))
                                 : be_words(spec.iv.data());
  }

  // Runs the kernel over the block ranges [0, splits[0]), [splits[0],
  // splits[1]), ..., [splits.back(), past the end), each range on a thread
  // of its own when `threaded`. Checks that nothing past nbytes was written.
  std::vector<std::uint8_t> run(const std::vector<std::uint64_t>& splits = {},
                                bool threaded = false) const {
    std::vector<std::uint8_t> out(in.size() + kGuardLen, kGuard);
    std::vector<std::uint64_t> bounds{0};
    bounds.insert(bounds.end(), splits.begin(), splits.end());
    bounds.push_back(in.size() / 16 + 3);  // past the last block: skipped, as on a device
    auto range = [&](std::size_t i) {
      run_host_kernel(kernel, in.data(), out.data(), in.size(), first_block, state.data(),
                      keys.words.data(), keys.rounds, aes_tables().image.data(), bounds[i],
                      bounds[i + 1]);
    };
    if (threaded) {
      std::vector<std::thread> threads;
      for (std::size_t i = 0; i + 1 < bounds.size(); ++i) threads.emplace_back(range, i);
      for (std::thread& t : threads) t.join();
    } else {
      for (std::size_t i = 0; i + 1 < bounds.size(); ++i) range(i);
    }
    EXPECT_TRUE(std::all_of(out.begin() + static_cast<std::ptrdiff_t>(in.size()), out.end(),
                            [](std::uint8_t b) { return b == kGuard; }))
        << "the kernel wrote past nbytes";
    out.resize(in.size());
    return out;
  }
};

// A counter block 3 below a carry out of its low n bytes (they are ff .. ff fd;
// the others 1, 2, 3, ...): its fourth block carries, or wraps when n is 16.
Block iv_below_carry(std::size_t n) {
  Block iv{};
  for (std::size_t i = 0; i < 16; ++i) iv[i] = i < 16 - n ? static_cast<std::uint8_t>(i + 1) : 0xff;
  iv[15] = 0xfd;
  return iv;
}

std::vector<std::uint8_t> slice(const std::vector<std::uint8_t>& v, std::uint64_t first,
                                std::size_t nbytes) {
  return {v.begin() + static_cast<std::ptrdiff_t>(16 * first),
          v.begin() + static_cast<std::ptrdiff_t>(16 * first + nbytes)};
}

TEST(HostKernels, EveryKernelAndKeySizeMatchesOpenSsl) {
  for (Kernel kernel : kAllKernels) {
    for (unsigned bits : kKeyBits) {
      SCOPED_TRACE(testing::Message() << kernel_name(kernel) << " AES-" << bits);
      const CipherSpec spec = kernel_spec(kernel, bits, bits + static_cast<unsigned>(kernel));
      // 77 blocks, and 5 bytes more where the mode takes a partial block.
      const std::size_t len = 77 * 16 + (takes_partial_block(kernel) ? 5 : 0);
      const auto message = random_bytes(len, bits);
      const auto expected = openssl_oneshot(spec, message);
      ASSERT_EQ(expected.size(), len);
      // The whole message as one batch, then batches from blocks 1 and 13 to
      // the end, and one of 20 blocks in the middle.
      EXPECT_EQ(Batch(kernel, spec, message, 0, len).run(), expected);
      for (std::uint64_t first : {1u, 13u}) {
        const std::size_t n = len - 16 * first;
        EXPECT_EQ(Batch(kernel, spec, message, first, n).run(), slice(expected, first, n))
            << "batch from block " << first;
      }
      EXPECT_EQ(Batch(kernel, spec, message, 40, 20 * 16).run(), slice(expected, 40, 20 * 16));
    }
  }
}

// CTR and CFB128 end in a partial block of every length, and messages shorter
// than a block are all partial block; nothing past nbytes is read (the input
// is exactly nbytes, for ASan) or written (Batch::run checks a guard).
TEST(HostKernels, PartialLastBlockOfEveryLength) {
  for (Kernel kernel : {Kernel::ctr, Kernel::cfb128_decrypt}) {
    for (unsigned bits : kKeyBits) {
      const CipherSpec spec = kernel_spec(kernel, bits, 7 * bits);
      for (std::size_t len : {1u, 15u, 17u, 31u, 33u, 100u, 16u * 40 + 1, 16u * 40 + 15}) {
        SCOPED_TRACE(testing::Message() << kernel_name(kernel) << " AES-" << bits << " " << len
                                        << " bytes");
        const auto message = random_bytes(len, static_cast<std::uint32_t>(len));
        const auto expected = openssl_oneshot(spec, message);
        EXPECT_EQ(Batch(kernel, spec, message, 0, len).run(), expected);
        if (len > 16) {
          EXPECT_EQ(Batch(kernel, spec, message, 1, len - 16).run(), slice(expected, 1, len - 16));
        }
      }
    }
  }
}

// A batch cut into block ranges at odd places, inside and across the 32-lane
// groups, gives what one call over the whole batch gives, run one range after
// another or each on a thread of its own.
TEST(HostKernels, SplitBlockRangesEqualOneCall) {
  const std::vector<std::vector<std::uint64_t>> cuts = {
      {1}, {31}, {32, 33}, {3, 5, 64, 65, 99}, {7, 7, 50}, {100}};
  for (Kernel kernel : kAllKernels) {
    for (unsigned bits : kKeyBits) {
      SCOPED_TRACE(testing::Message() << kernel_name(kernel) << " AES-" << bits);
      const CipherSpec spec = kernel_spec(kernel, bits, 3 * bits + static_cast<unsigned>(kernel));
      const std::size_t len = 100 * 16 + (takes_partial_block(kernel) ? 9 : 0);
      const auto message = random_bytes(len, 5 * bits);
      const auto expected = openssl_oneshot(spec, message);
      const Batch batch(kernel, spec, message, 0, len);
      const auto whole = batch.run();
      EXPECT_EQ(whole, expected);
      for (const auto& splits : cuts) {
        EXPECT_EQ(batch.run(splits), whole) << "split at " << testing::PrintToString(splits);
        EXPECT_EQ(batch.run(splits, true), whole)
            << "split at " << testing::PrintToString(splits) << ", threaded";
      }
    }
  }
}

// The counter is one 128-bit big-endian integer: it carries out of the low 32
// and 64 bits and wraps at 2^128, as OpenSSL's does, whether the crossing
// comes in the message's first batch or a later one.
TEST(HostKernels, CtrCounterCarriesAcross2To32And2To64AndWrapsAt2To128) {
  for (unsigned bits : kKeyBits) {
    for (std::size_t carry_bytes : {4u, 8u, 16u}) {
      SCOPED_TRACE(testing::Message() << "AES-" << bits << ", carry out of the low "
                                      << carry_bytes * 8 << " bits");
      CipherSpec spec = kernel_spec(Kernel::ctr, bits, bits);
      spec.iv = iv_below_carry(carry_bytes);
      const std::size_t len = 11 * 16 + 3;
      const auto message = random_bytes(len, bits + static_cast<std::uint32_t>(carry_bytes));
      const auto expected = openssl_oneshot(spec, message);
      EXPECT_EQ(Batch(Kernel::ctr, spec, message, 0, len).run(), expected);
      EXPECT_EQ(Batch(Kernel::ctr, spec, message, 2, len - 32).run(), slice(expected, 2, len - 32));
      EXPECT_EQ(Batch(Kernel::ctr, spec, message, 0, len).run({1, 2, 3, 4}, true), expected);
    }
  }
}

// A batch far into a message: first_block is added to the whole counter, so
// counter0 + first_block + b carries across 2^32 and 2^64 as OpenSSL's counter
// does from the IV counter0 + first_block.
TEST(HostKernels, CtrFirstBlockCarriesThroughTheCounter) {
  struct Case {
    std::uint64_t counter0_low;  // the counter's high 64 bits are 0
    std::uint64_t first_block;
  };
  for (const Case c : {Case{0, (std::uint64_t{1} << 32) - 2}, Case{3, ~std::uint64_t{0} - 5}}) {
    SCOPED_TRACE(testing::Message() << "counter0 " << c.counter0_low << ", first block "
                                    << c.first_block);
    CipherSpec spec = kernel_spec(Kernel::ctr, 256, 11);
    spec.iv = {};
    const std::uint64_t batch_counter = c.counter0_low + c.first_block;
    for (std::size_t i = 0; i < 8; ++i) {
      spec.iv[15 - i] = static_cast<std::uint8_t>(batch_counter >> (8 * i));
    }
    const std::size_t len = 5 * 16 + 1;  // counters batch_counter .. batch_counter + 5
    const auto message = random_bytes(len, 12);
    const auto expected = openssl_oneshot(spec, message);
    const RoundKeys keys = expand_encrypt_key(spec.key.data(), spec.key.size());
    const std::uint32_t counter0[4] = {0, 0, static_cast<std::uint32_t>(c.counter0_low >> 32),
                                       static_cast<std::uint32_t>(c.counter0_low)};
    std::vector<std::uint8_t> out(len);
    run_host_kernel(Kernel::ctr, message.data(), out.data(), len, c.first_block, counter0,
                    keys.words.data(), keys.rounds, aes_tables().image.data(), 0, 6);
    EXPECT_EQ(out, expected);
  }
}

// The bodies compiled as C (core_c_check.c) compute what the C++ ones do.
TEST(HostKernels, BodiesCompiledAsCAgree) {
  const CipherSpec spec = kernel_spec(Kernel::ctr, 192, 21);
  const std::size_t len = 40 * 16 + 7;
  const auto message = random_bytes(len, 22);
  const Batch batch(Kernel::ctr, spec, message, 3, len - 48);
  std::vector<std::uint32_t> local(PAES_ENCRYPT_LOCAL_WORDS);
  for (std::size_t i = 0; i < local.size(); ++i) {
    local[i] = aes_tables().image[PAES_TE0_OFFSET + i / PAES_TABLE_LANES];
  }
  std::vector<std::uint8_t> out(batch.in.size());
  for (std::uint64_t b = 0; b < (batch.in.size() + 15) / 16; ++b) {
    paes_c_ctr_body(b, batch.in.data(), out.data(), batch.in.size(), batch.first_block,
                    batch.state.data(), local.data() + b % PAES_TABLE_LANES, batch.keys.words.data(),
                    batch.keys.rounds);
  }
  EXPECT_EQ(out, batch.run());
  EXPECT_EQ(out, slice(openssl_oneshot(spec, message), 3, len - 48));
}

TEST(HostKernels, RejectsRoundCountsOtherThan10_12_14) {
  const std::uint8_t in[16] = {};
  std::uint8_t out[16] = {};
  const std::uint32_t state[4] = {};
  const std::uint32_t keys[PAES_MAX_ROUND_KEY_WORDS] = {};
  for (int rounds : {0, 11, 13, 15}) {
    EXPECT_THROW(run_host_kernel(Kernel::ecb_encrypt, in, out, 16, 0, state, keys, rounds,
                                 aes_tables().image.data(), 0, 1),
                 std::invalid_argument)
        << rounds;
  }
}

}  // namespace
}  // namespace paes::gpu
