// Host-side AES key expansion for the GPU core (aes_core.h): the devices get
// finished round keys, so kernels never expand keys and every work-item reads
// the same words (a broadcast from constant memory).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "cipher/gpu/aes_core.h"

namespace paes::gpu {

// Round keys as big-endian words, 4 * (rounds + 1) of them in use. Key
// material: the words are wiped when the object is destroyed.
struct RoundKeys {
  std::array<std::uint32_t, PAES_MAX_ROUND_KEY_WORDS> words{};
  int rounds = 0;  // Nr: 10, 12 or 14

  RoundKeys() = default;
  RoundKeys(const RoundKeys&) = default;
  RoundKeys& operator=(const RoundKeys&) = default;
  ~RoundKeys();

  std::size_t word_count() const { return 4 * static_cast<std::size_t>(rounds + 1); }
};

// FIPS-197 KeyExpansion (5.2) of a 16-, 24- or 32-byte key. Throws a usage
// Error for any other length.
RoundKeys expand_encrypt_key(const std::uint8_t* key, std::size_t key_len);

// The round keys of the equivalent inverse cipher (FIPS-197 5.3.5), in the
// order paes_decrypt_block consumes them: round Nr's key first, round 0's
// last, InvMixColumns applied to the keys of rounds 1..Nr-1.
RoundKeys expand_decrypt_key(const std::uint8_t* key, std::size_t key_len);

}  // namespace paes::gpu
