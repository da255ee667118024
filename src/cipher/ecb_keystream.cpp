#include "cipher/ecb_keystream.hpp"

#include <algorithm>
#include <cstring>

namespace paes {

void xor_into(std::uint8_t* out, const std::uint8_t* in, const std::uint8_t* keystream,
              std::size_t len) {
  std::size_t i = 0;
  for (; i + 8 <= len; i += 8) {  // a word at a time; memcpy keeps it alignment-safe
    std::uint64_t a, b;
    std::memcpy(&a, in + i, 8);
    std::memcpy(&b, keystream + i, 8);
    a ^= b;
    std::memcpy(out + i, &a, 8);
  }
  for (; i < len; ++i) out[i] = static_cast<std::uint8_t>(in[i] ^ keystream[i]);
}

void EcbKeystreamCfb128Decrypt::update(std::uint8_t* out, const std::uint8_t* in, std::size_t len) {
  std::size_t done = 0;
  for (; used_ != 0 && done < len; ++done) {
    const std::uint8_t c = in[done];  // read before out (which may be in) is written
    out[done] = static_cast<std::uint8_t>(c ^ pending_keystream_[used_]);
    pending_ciphertext_[used_] = c;
    if (++used_ == kBlockLen) {
      feedback_ = pending_ciphertext_;
      used_ = 0;
    }
  }
  while (done < len) {
    const std::size_t n = std::min(kTileLen, len - done);
    const std::size_t blocks = (n + kBlockLen - 1) / kBlockLen;
    // keystream = E(feedback) || E(C[0 .. blocks-1)) of this tile. The
    // ciphertext is read before this tile's plaintext overwrites it (out may
    // be in); the block before the tile is kept in `feedback_` for that reason.
    ecb_encrypt(tile_, feedback_.data(), kBlockLen);
    if (blocks > 1) ecb_encrypt(tile_ + kBlockLen, in + done, (blocks - 1) * kBlockLen);
    const std::size_t partial = n % kBlockLen;
    if (partial == 0) {
      std::memcpy(feedback_.data(), in + done + n - kBlockLen, kBlockLen);
    } else {
      // The piece ends inside its last block: a next piece finishes it.
      std::memcpy(pending_keystream_.data(), tile_ + n - partial, kBlockLen);
      std::memcpy(pending_ciphertext_.data(), in + done + n - partial, partial);
      used_ = partial;
    }
    xor_into(out + done, in + done, tile_, n);
    done += n;
  }
}

}  // namespace paes
