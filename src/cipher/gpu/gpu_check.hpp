// Checks on what a GPU computes, inside the GPU cipher backend (gpu_backend.hpp).
//
// Why: the raw modes carry no authentication, so a device that computes AES
// wrongly (a faulty card, a kernel the driver miscompiled, a bad build of
// ours) would write wrong ciphertext or plaintext with exit status 0, and
// nothing downstream would notice until the data was needed. Both checks
// compare with a well-kept library on the CPU, never with a second AES of our
// own:
//
// - At start, run_self_test() puts known answers (SP 800-38A, every key size,
//   every kernel: ECB both ways, CTR, CBC and CFB128 decryption) through the
//   device. A device that fails is never used.
// - For every batch, BatchCheck recomputes three of its blocks: the first
//   (it starts from the counter or chaining block the host handed over), the
//   last (the next batch chains from it; the final batch's may be partial)
//   and one at random (any work-item's). Three blocks of a batch of
//   megabytes: the cost is nil next to the transfers.
//
// Both throw Error on a mismatch, so no output of a run that failed a check
// is ever committed. The CPU side is the CPU backend a job would use
// (cpu_raw_backend: ipsec-mb or OpenSSL's EVP); the self-test's answers are
// NIST's.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>

#include "cipher/backend.hpp"
#include "paes/error.hpp"
#include "paes/mode.hpp"

namespace paes::gpu {

// What the checks throw when a device's AES output is wrong.
class WrongGpuOutput : public Error {
 public:
  using Error::Error;
};

// A whole message through the device (the backend's RawCipher on a lane of
// its own): `out` holds len + 16 bytes; returns the output length.
using DeviceTransform =
    std::function<std::size_t(const CipherSpec& spec, std::uint8_t* out, const std::uint8_t* in,
                              std::size_t len)>;

// Runs the known answers through `transform`. `device` names the device in
// messages (the device's label). Throws WrongGpuOutput saying which answer
// came out wrong (also when the backend's own batch check caught it);
// other errors of the transform pass through.
void run_self_test(const DeviceTransform& transform, const std::string& device);

// The blocks of one batch that BatchCheck recomputes, with what the CPU needs
// for them: taken while the batch's input is staged, compared once its output
// is back.
struct BatchSample {
  struct SampledBlock {
    std::size_t offset = 0;  // in the batch
    std::size_t len = 0;     // 16, or less for a partial last block (CTR, CFB128)
    Block in{};
    Block iv{};  // CTR: the block's counter; CBC, CFB128: the ciphertext block before it
  };
  std::array<SampledBlock, 3> blocks{};
  std::size_t count = 0;
  std::uint64_t first_block = 0;  // index of the batch's first block in the chunk
};

class BatchCheck {
 public:
  // `device` names the device in messages, as for run_self_test.
  explicit BatchCheck(std::string device);

  // Keys the reference for a chunk under `spec` that starts at `start_state`,
  // with the arguments of the engine's begin().
  void begin(const CipherSpec& spec, const Block& start_state);

  // Picks the blocks to check in a batch of n bytes staged at `staged`, whose
  // first block is block `first_block` of the chunk; `before` is the
  // ciphertext block before the batch (CBC, CFB128; ignored otherwise).
  BatchSample sample(const std::uint8_t* staged, std::size_t n, std::uint64_t first_block,
                     const Block& before);

  // Recomputes the sampled blocks on the CPU and compares them with the
  // device's output for the batch, `out` (its first byte the batch's first).
  // Throws WrongGpuOutput naming the device and the block on a mismatch.
  void verify(const BatchSample& sample, const std::uint8_t* out);

 private:
  std::string device_;
  Mode mode_ = Mode::ctr;
  Direction direction_ = Direction::encrypt;
  Block counter0_{};
  std::unique_ptr<RawCipher> cpu_;
  std::minstd_rand random_;
};

}  // namespace paes::gpu
