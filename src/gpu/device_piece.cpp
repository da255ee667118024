#include "gpu/device_piece.hpp"

#include <string>

#include "cipher/padding.hpp"
#include "paes/error.hpp"

namespace paes::gpu {

DevicePiece::DevicePiece(Mode mode, Direction direction, bool padded, std::size_t len, bool final,
                         std::span<const std::uint8_t> tail, const char* engine)
    : from_input_(len), device_len_(len), strip_padding_(final && padded && direction == Direction::decrypt) {
  if (!final && len % kBlockLen != 0) {
    throw usage_error(std::string(engine) + " engine: pieces before the final one must be whole blocks");
  }
  if (final && padded && direction == Direction::encrypt) {
    from_input_ = len / kBlockLen * kBlockLen;
    if (tail.size() != len - from_input_) throw Error("internal: a padded piece's tail is the wrong length");
    pad_block_ = pkcs7_final_block(tail.data(), tail.size());
    device_len_ = from_input_ + kBlockLen;
  } else if (final) {
    check_message_length(mode, direction, padded, len);
  }
}

}  // namespace paes::gpu
