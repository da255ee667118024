// What every GPU device does on the host around its kernels, for one piece of
// a message: decide which bytes go through the device (the input, with the
// final piece of a padded encryption's tail moved into its PKCS#7 block), and
// stage them batch by batch into page-locked memory.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "paes/mode.hpp"

namespace paes::gpu {

class DevicePiece {
 public:
  // A piece of `len` input bytes. `tail` is the input's last len % 16 bytes,
  // which only a padded encryption's final piece reads (into its padding
  // block). Throws as the CPU path does: a usage Error for a non-final piece
  // that is not whole blocks, and for a final one what check_message_length
  // (cipher/padding.hpp) throws for a message of `len` bytes (a caller whose
  // message is longer than its final piece checks the whole length first, to
  // name it). `engine` names the engine in messages.
  DevicePiece(Mode mode, Direction direction, bool padded, std::size_t len, bool final,
              std::span<const std::uint8_t> tail, const char* engine);

  // Bytes that go through the device: len, or for a padded encryption's final
  // piece its whole blocks plus the padding block.
  std::size_t device_len() const { return device_len_; }
  // Fills `host` with bytes [offset, offset + n) of what goes through the
  // device: input bytes from read(dst, input_offset, count), then the
  // padding block's.
  template <class Read>
  void stage(std::uint8_t* host, std::size_t offset, std::size_t n, Read&& read) const {
    const std::size_t copied = offset < from_input_ ? std::min(n, from_input_ - offset) : 0;
    if (copied != 0) read(host, offset, copied);
    if (copied < n) std::memcpy(host + copied, pad_block_.data() + (offset + copied - from_input_), n - copied);
  }
  // Whether the device's output ends in padding to check and strip (a padded
  // decryption's final piece, whole blocks and not empty).
  bool strips_padding() const { return strip_padding_; }

 private:
  std::size_t from_input_;
  std::size_t device_len_;
  Block pad_block_{};
  bool strip_padding_;
};

}  // namespace paes::gpu
