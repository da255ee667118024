// ChunkCipher: one chunk's AES through OpenSSL EVP, with EVP's own padding off
// so chunks can start and stop at any block; PKCS#7 is applied here, on the
// final piece only, exactly as openssl enc applies it.
//
// CFB128 decryption does not use EVP's CFB, which OpenSSL doesn't interleave
// (about 0.5 GB/s a core). Since P[i] = C[i] ^ E(C[i-1]) with C[-1] = IV, the
// keystream is the ECB encryption of the ciphertext shifted by one block, which
// OpenSSL runs at full interleaved AES-NI speed, tile by tile into a small
// keystream buffer that stays in L1.
#include "paes/cipher.hpp"

#include <algorithm>
#include <cstring>

#include "cipher/evp.hpp"
#include "cipher/padding.hpp"
#include "paes/error.hpp"

namespace paes {
namespace {

// Big enough to amortise one EVP call per tile, small enough to stay in L1.
constexpr std::size_t kKeystreamTileLen = 16 * 1024;

// out = in ^ keystream, a word at a time (memcpy keeps it alignment-safe).
void xor_into(std::uint8_t* out, const std::uint8_t* in, const std::uint8_t* keystream,
              std::size_t len) {
  std::size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    std::uint64_t a, b;
    std::memcpy(&a, in + i, 8);
    std::memcpy(&b, keystream + i, 8);
    a ^= b;
    std::memcpy(out + i, &a, 8);
  }
  for (; i < len; ++i) out[i] = static_cast<std::uint8_t>(in[i] ^ keystream[i]);
}

bool uses_ecb_keystream(const CipherSpec& spec) {
  return spec.mode == Mode::cfb128 && spec.direction == Direction::decrypt;
}

}  // namespace

struct ChunkCipher::State {
  Mode mode;
  Direction direction;
  bool padded;
  bool ecb_keystream;
  EvpCipherPtr cipher;
  EvpCtxPtr ctx;
  Block feedback{};  // CFB128-decrypt fast path: the previous ciphertext block
  alignas(64) std::uint8_t tile[kKeystreamTileLen];

  std::size_t cfb128_decrypt(std::uint8_t* out, const std::uint8_t* in, std::size_t len);
};

ChunkCipher::ChunkCipher(const CipherSpec& spec) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.mode = spec.mode;
  s.direction = spec.direction;
  s.padded = spec.padded();
  s.ecb_keystream = uses_ecb_keystream(spec);
  s.cipher = fetch_aes(s.ecb_keystream ? Mode::ecb : spec.mode, spec.key.size());
  const Direction key_direction = s.ecb_keystream ? Direction::encrypt : spec.direction;
  const std::uint8_t* iv = spec.mode == Mode::ecb ? nullptr : spec.iv.data();
  s.ctx = make_aes_ctx(s.cipher.get(), spec.key, s.ecb_keystream ? nullptr : iv, key_direction,
                       false);
}

ChunkCipher::~ChunkCipher() = default;

const char* ChunkCipher::implementation() const {
  return state_->ecb_keystream ? "openssl-ecb-keystream" : "openssl-evp";
}

void ChunkCipher::begin(const Block& start_state) {
  State& s = *state_;
  if (s.ecb_keystream) {
    s.feedback = start_state;
    return;
  }
  if (s.mode == Mode::ecb) return;
  // A null key keeps the expanded key; only the IV and the partial-block state reset.
  if (EVP_CipherInit_ex2(s.ctx.get(), nullptr, nullptr, start_state.data(), -1, nullptr) != 1) {
    throw_openssl_error("cipher IV reset failed");
  }
}

std::size_t ChunkCipher::State::cfb128_decrypt(std::uint8_t* out, const std::uint8_t* in,
                                               std::size_t len) {
  std::size_t done = 0;
  while (done < len) {
    const std::size_t n = std::min(kKeystreamTileLen, len - done);
    const std::size_t blocks = (n + kBlockLen - 1) / kBlockLen;
    // keystream = E(feedback) || E(C[0 .. blocks-1)) of this tile. The
    // ciphertext is read before this tile's plaintext overwrites it (out may
    // be in); the block before the tile is kept in `feedback` for that reason.
    evp_update(ctx.get(), tile, feedback.data(), kBlockLen);
    evp_update(ctx.get(), tile + kBlockLen, in + done, (blocks - 1) * kBlockLen);
    if (n % kBlockLen == 0) std::memcpy(feedback.data(), in + done + n - kBlockLen, kBlockLen);
    xor_into(out + done, in + done, tile, n);
    done += n;
  }
  return len;
}

std::size_t ChunkCipher::update(std::uint8_t* out, const std::uint8_t* in, std::size_t in_len,
                                bool final_piece) {
  State& s = *state_;
  if (s.ecb_keystream) return s.cfb128_decrypt(out, in, in_len);
  if (!s.padded || !final_piece) {
    if (mode_is_padded(s.mode) && in_len % kBlockLen != 0) {
      throw Error("internal: a padded mode got a piece that is not whole blocks");
    }
    return evp_update(s.ctx.get(), out, in, in_len);
  }

  if (s.direction == Direction::encrypt) {
    const std::size_t whole = in_len / kBlockLen * kBlockLen;
    const Block last = pkcs7_final_block(in + whole, in_len - whole);
    evp_update(s.ctx.get(), out, in, whole);
    evp_update(s.ctx.get(), out + whole, last.data(), kBlockLen);
    return whole + kBlockLen;
  }
  // Plans reject padded ciphertext that is empty or not whole blocks.
  const std::size_t produced = evp_update(s.ctx.get(), out, in, in_len);
  return produced - pkcs7_pad_len(out + produced - kBlockLen);
}

}  // namespace paes
