#include "cipher/padding.hpp"

#include <cstring>
#include <string>

#include "cipher/backend.hpp"
#include "paes/error.hpp"

namespace paes {

Block pkcs7_final_block(const std::uint8_t* tail, std::size_t tail_len) {
  Block block;
  const auto pad = static_cast<std::uint8_t>(kBlockLen - tail_len);
  if (tail_len != 0) std::memcpy(block.data(), tail, tail_len);
  std::memset(block.data() + tail_len, pad, pad);
  return block;
}

std::size_t pkcs7_pad_len(const std::uint8_t* last_block) {
  const std::uint8_t pad = last_block[kBlockLen - 1];
  bool valid = pad >= 1 && pad <= kBlockLen;
  for (std::size_t i = 0; valid && i < pad; ++i) {
    valid = last_block[kBlockLen - 1 - i] == pad;
  }
  if (!valid) throw BadPaddingError("bad decrypt: wrong key or corrupted data");
  return pad;
}

void check_message_length(Mode mode, Direction direction, bool padded, std::uint64_t len) {
  if (mode_is_padded(mode) && len % kBlockLen != 0) {
    if (direction == Direction::decrypt) {
      throw Error("ciphertext length " + std::to_string(len) + " is not a multiple of 16: not " +
                  std::string(mode_name(mode)) + " ciphertext, or truncated");
    }
    if (!padded) {
      throw Error("input length " + std::to_string(len) + " is not a multiple of 16, which unpadded " +
                  std::string(mode_name(mode)) + " requires");
    }
  }
  if (padded && direction == Direction::decrypt && len == 0) {
    throw Error("bad decrypt: empty input holds no padding block (wrong key or corrupted data)");
  }
}

std::size_t padded_update(RawCipher& cipher, Mode mode, Direction direction, bool padded,
                          std::uint8_t* out, const std::uint8_t* in, std::size_t len,
                          bool final_piece) {
  if (!padded || !final_piece) {
    if (mode_is_padded(mode) && len % kBlockLen != 0) {
      throw Error("internal: a padded mode got a piece that is not whole blocks");
    }
    cipher.update(out, in, len);
    return len;
  }
  if (direction == Direction::encrypt) {
    const std::size_t whole = len / kBlockLen * kBlockLen;
    const Block last = pkcs7_final_block(in + whole, len - whole);
    cipher.update(out, in, whole);
    cipher.update(out + whole, last.data(), kBlockLen);
    return whole + kBlockLen;
  }
  // Plans reject padded ciphertext that is empty or not whole blocks.
  cipher.update(out, in, len);
  return len - pkcs7_pad_len(out + len - kBlockLen);
}

}  // namespace paes
