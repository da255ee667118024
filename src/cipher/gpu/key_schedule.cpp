#include "cipher/gpu/key_schedule.hpp"

#include <openssl/crypto.h>

#include "cipher/gpu/aes_tables.hpp"
#include "paes/mode.hpp"

namespace paes::gpu {

RoundKeys::~RoundKeys() { OPENSSL_cleanse(words.data(), sizeof(words)); }

namespace {

std::uint32_t sub_word(std::uint32_t w) {
  const auto& s = aes_tables().sbox;
  return (std::uint32_t{s[w >> 24]} << 24) | (std::uint32_t{s[(w >> 16) & 0xff]} << 16) |
         (std::uint32_t{s[(w >> 8) & 0xff]} << 8) | s[w & 0xff];
}

// InvMixColumns of one column (FIPS-197 5.3.3), from the field arithmetic
// rather than the Td tables, so the tables and the schedule check each other.
std::uint32_t inv_mix_column(std::uint32_t w) {
  const auto a0 = static_cast<std::uint8_t>(w >> 24);
  const auto a1 = static_cast<std::uint8_t>(w >> 16);
  const auto a2 = static_cast<std::uint8_t>(w >> 8);
  const auto a3 = static_cast<std::uint8_t>(w);
  auto row = [](std::uint8_t x0, std::uint8_t x1, std::uint8_t x2, std::uint8_t x3) {
    return std::uint32_t(gf_mul(x0, 0x0e) ^ gf_mul(x1, 0x0b) ^ gf_mul(x2, 0x0d) ^
                         gf_mul(x3, 0x09));
  };
  return (row(a0, a1, a2, a3) << 24) | (row(a1, a2, a3, a0) << 16) |
         (row(a2, a3, a0, a1) << 8) | row(a3, a0, a1, a2);
}

}  // namespace

RoundKeys expand_encrypt_key(const std::uint8_t* key, std::size_t key_len) {
  check_key_length(key_len);
  const std::size_t nk = key_len / 4;
  RoundKeys rk;
  rk.rounds = static_cast<int>(nk) + 6;
  auto& w = rk.words;
  for (std::size_t i = 0; i < nk; ++i) {
    w[i] = (std::uint32_t{key[4 * i]} << 24) | (std::uint32_t{key[4 * i + 1]} << 16) |
           (std::uint32_t{key[4 * i + 2]} << 8) | key[4 * i + 3];
  }
  std::uint8_t rcon = 1;
  for (std::size_t i = nk; i < rk.word_count(); ++i) {
    std::uint32_t temp = w[i - 1];
    if (i % nk == 0) {
      temp = sub_word((temp << 8) | (temp >> 24)) ^ (std::uint32_t{rcon} << 24);
      rcon = gf_mul(rcon, 2);
    } else if (nk > 6 && i % nk == 4) {
      temp = sub_word(temp);
    }
    w[i] = w[i - nk] ^ temp;
  }
  return rk;
}

RoundKeys expand_decrypt_key(const std::uint8_t* key, std::size_t key_len) {
  const RoundKeys enc = expand_encrypt_key(key, key_len);
  RoundKeys dec;
  dec.rounds = enc.rounds;
  const auto nr = static_cast<std::size_t>(enc.rounds);
  for (std::size_t r = 0; r <= nr; ++r) {
    for (std::size_t c = 0; c < 4; ++c) {
      const std::uint32_t w = enc.words[4 * (nr - r) + c];
      dec.words[4 * r + c] = (r == 0 || r == nr) ? w : inv_mix_column(w);
    }
  }
  return dec;
}

}  // namespace paes::gpu
