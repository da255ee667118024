#include "cipher/gpu/aes_tables.hpp"

namespace paes::gpu {

std::uint8_t gf_mul(std::uint8_t a, std::uint8_t b) {
  unsigned p = 0;
  unsigned x = a;
  for (unsigned y = b; y != 0; y >>= 1) {
    if (y & 1u) p ^= x;
    x <<= 1;
    if (x & 0x100u) x ^= 0x11bu;
  }
  return static_cast<std::uint8_t>(p);
}

namespace {

std::uint8_t rotl8(std::uint8_t v, unsigned n) {
  return static_cast<std::uint8_t>((v << n) | (v >> (8 - n)));
}

std::uint32_t word(std::uint8_t b3, std::uint8_t b2, std::uint8_t b1, std::uint8_t b0) {
  return (std::uint32_t{b3} << 24) | (std::uint32_t{b2} << 16) | (std::uint32_t{b1} << 8) | b0;
}

AesTables build() {
  AesTables t{};
  // Multiplicative inverses by search: 255 x 255 products, once per process,
  // and obviously right, which a log/antilog construction is less so.
  std::array<std::uint8_t, 256> inverse{};
  for (unsigned x = 1; x < 256; ++x) {
    for (unsigned y = 1; y < 256; ++y) {
      if (gf_mul(static_cast<std::uint8_t>(x), static_cast<std::uint8_t>(y)) == 1) {
        inverse[x] = static_cast<std::uint8_t>(y);
        break;
      }
    }
  }
  for (unsigned x = 0; x < 256; ++x) {
    const std::uint8_t b = inverse[x];
    // FIPS-197 (5.1): b ^ (b <<< 1) ^ (b <<< 2) ^ (b <<< 3) ^ (b <<< 4) ^ 0x63.
    const auto s = static_cast<std::uint8_t>(b ^ rotl8(b, 1) ^ rotl8(b, 2) ^ rotl8(b, 3) ^
                                             rotl8(b, 4) ^ 0x63);
    t.sbox[x] = s;
    t.inv_sbox[s] = static_cast<std::uint8_t>(x);
  }
  for (unsigned x = 0; x < 256; ++x) {
    const std::uint8_t s = t.sbox[x];
    const std::uint8_t v = t.inv_sbox[x];
    // MixColumns column (2,1,1,3)*s and InvMixColumns column (e,9,d,b)*v.
    t.image[PAES_TE0_OFFSET + x] = word(gf_mul(s, 2), s, s, gf_mul(s, 3));
    t.image[PAES_TD0_OFFSET + x] =
        word(gf_mul(v, 0x0e), gf_mul(v, 0x09), gf_mul(v, 0x0d), gf_mul(v, 0x0b));
  }
  // Four InvS bytes to a word, low byte first: the decrypting kernels keep a
  // copy per bank, and 8 KiB of them fit beside Td0 where 32 KiB would not.
  for (unsigned i = 0; i < 64; ++i) {
    const std::uint8_t* v = t.inv_sbox.data() + 4 * i;
    t.image[PAES_INV_SBOX_OFFSET + i] = word(v[3], v[2], v[1], v[0]);
  }
  return t;
}

}  // namespace

const AesTables& aes_tables() {
  static const AesTables tables = build();
  return tables;
}

}  // namespace paes::gpu
