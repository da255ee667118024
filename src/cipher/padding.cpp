#include "cipher/padding.hpp"

#include <cstring>

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
  if (!valid) throw Error("bad decrypt: wrong key or corrupted data");
  return pad;
}

}  // namespace paes
