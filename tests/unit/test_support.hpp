// Helpers shared by the unit tests: deterministic random bytes and specs.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "paes/mode.hpp"

namespace paes::test {

inline std::vector<std::uint8_t> random_bytes(std::size_t len, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> bytes(len);
  for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
  return bytes;
}

inline CipherSpec make_spec(Mode mode, Direction direction, unsigned key_bits, std::uint32_t seed,
                            bool padding = true) {
  CipherSpec spec;
  spec.mode = mode;
  spec.direction = direction;
  const auto key = random_bytes(key_bits / 8, seed);
  spec.key = SecretBytes(key.data(), key.size());
  const auto iv = random_bytes(kBlockLen, seed + 1);
  std::copy(iv.begin(), iv.end(), spec.iv.begin());
  spec.padding = padding;
  return spec;
}

}  // namespace paes::test
