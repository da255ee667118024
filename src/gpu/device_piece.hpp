// What both GPU engines do on the host around their kernels, for one
// update(): decide which bytes go through the device (the input, with the
// final piece of a padded encryption's tail moved into its PKCS#7 block),
// stage them batch by batch into pinned memory, and strip the padding of a
// padded decryption once the device has written its output.
#pragma once

#include <cstddef>
#include <cstdint>

#include "paes/mode.hpp"

namespace paes::gpu {

class DevicePiece {
 public:
  // Throws as the CPU path does: a usage Error for a non-final piece that is
  // not whole blocks, "bad decrypt" for padded ciphertext that is not whole
  // blocks, and the --no-pad length error for ECB/CBC. `engine` names the
  // engine in messages.
  DevicePiece(Mode mode, Direction direction, bool padded, const std::uint8_t* in, std::size_t len,
              bool final, const char* engine);

  // Bytes that go through the device: len, or for a padded encryption's final
  // piece its whole blocks plus the padding block.
  std::size_t device_len() const { return device_len_; }
  // Copies bytes [offset, offset + n) of what goes through the device to `host`.
  void stage(std::uint8_t* host, std::size_t offset, std::size_t n) const;
  // The output length once the device wrote device_len() bytes to `out`:
  // padded decryption checks and strips the padding (throws "bad decrypt").
  std::size_t output_len(const std::uint8_t* out) const;

 private:
  const std::uint8_t* in_;
  std::size_t from_input_;
  std::size_t device_len_;
  Block pad_block_{};
  bool strip_padding_;
};

}  // namespace paes::gpu
