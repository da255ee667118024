#include "gpu/device_piece.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "cipher/padding.hpp"
#include "paes/error.hpp"

namespace paes::gpu {

DevicePiece::DevicePiece(Mode mode, Direction direction, bool padded, const std::uint8_t* in,
                         std::size_t len, bool final, const char* engine)
    : in_(in), from_input_(len), device_len_(len), strip_padding_(final && padded && direction == Direction::decrypt) {
  if (!final && len % kBlockLen != 0) {
    throw usage_error(std::string(engine) + " engine: pieces before the final one must be whole blocks");
  }
  if (final && padded && direction == Direction::encrypt) {
    from_input_ = len / kBlockLen * kBlockLen;
    pad_block_ = pkcs7_final_block(in + from_input_, len - from_input_);
    device_len_ = from_input_ + kBlockLen;
  } else if (strip_padding_) {
    if (len == 0 || len % kBlockLen != 0) throw Error("bad decrypt: wrong key or corrupted data");
  } else if (mode_is_padded(mode) && len % kBlockLen != 0) {
    throw Error("input length is not a multiple of 16, which --no-pad requires");
  }
}

void DevicePiece::stage(std::uint8_t* host, std::size_t offset, std::size_t n) const {
  const std::size_t copied = offset < from_input_ ? std::min(n, from_input_ - offset) : 0;
  if (copied != 0) std::memcpy(host, in_ + offset, copied);
  if (copied < n) std::memcpy(host + copied, pad_block_.data(), n - copied);
}

std::size_t DevicePiece::output_len(const std::uint8_t* out) const {
  if (!strip_padding_) return device_len_;
  return device_len_ - pkcs7_pad_len(out + device_len_ - kBlockLen);
}

}  // namespace paes::gpu
