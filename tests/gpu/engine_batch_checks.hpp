// One test shared by the opencl and cuda engine suites (their engines have
// the same API): every batch of a message many batches long has its output
// checked on the CPU (engine/gpu/gpu_check.hpp), in every mode the device runs,
// and a right device passes every check, at every batch boundary.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cipher/oneshot.hpp"
#include "test_support.hpp"

namespace paes::test {

// `engine` must have small batches: the message is 100,003 bytes.
template <class GpuEngine>
void expect_every_batch_checked(GpuEngine& engine) {
  const Direction kDirections[] = {Direction::encrypt, Direction::decrypt};
  std::uint32_t seed = 900;
  for (Mode mode : {Mode::ecb, Mode::ctr, Mode::cbc, Mode::cfb128}) {
    for (Direction direction : kDirections) {
      seed += 2;
      const CipherSpec spec = make_spec(mode, direction, 128, seed);
      if (!GpuEngine::supports(spec)) continue;
      SCOPED_TRACE(std::string(mode_name(mode)) + " " + std::string(direction_name(direction)));
      auto in = random_bytes(100000 + 3, seed);
      // Padded ciphertext must decrypt to valid padding.
      if (direction == Direction::decrypt && spec.padded()) {
        in = openssl_oneshot(make_spec(mode, Direction::encrypt, 128, seed), in);
      }
      std::vector<std::uint8_t> out(in.size() + kBlockLen);
      engine.reset_stats();
      out.resize(engine.transform(spec, out.data(), in.data(), in.size()));
      EXPECT_TRUE(out == openssl_oneshot(spec, in));
      EXPECT_GT(engine.stats().batches, 20u);
      EXPECT_EQ(engine.stats().checked_batches, engine.stats().batches);
    }
  }
}

}  // namespace paes::test
