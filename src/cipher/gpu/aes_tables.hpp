// The AES tables of the GPU core (aes_core.h), computed on the host from the
// field arithmetic rather than typed in: the S-box from inverses in GF(2^8)
// and the affine map of FIPS-197 5.1.1, Te0/Td0 and the packed InvS from the
// S-boxes. They are uploaded to devices as one image in the layout aes_core.h
// defines, which the kernels replicate into local memory (aes_kernels.h).
#pragma once

#include <array>
#include <cstdint>

#include "cipher/gpu/aes_core.h"

namespace paes::gpu {

struct AesTables {
  std::array<std::uint8_t, 256> sbox;
  std::array<std::uint8_t, 256> inv_sbox;
  // Te0 | Td0 | packed InvS at PAES_TE0_OFFSET / PAES_TD0_OFFSET /
  // PAES_INV_SBOX_OFFSET.
  std::array<std::uint32_t, PAES_TABLE_WORDS> image;

  const std::uint32_t* te0() const { return image.data() + PAES_TE0_OFFSET; }
  const std::uint32_t* td0() const { return image.data() + PAES_TD0_OFFSET; }
  const std::uint32_t* packed_inv_sbox() const { return image.data() + PAES_INV_SBOX_OFFSET; }
};

// Computed once, on first use (thread-safe).
const AesTables& aes_tables();

// Multiplication in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1.
std::uint8_t gf_mul(std::uint8_t a, std::uint8_t b);

}  // namespace paes::gpu
