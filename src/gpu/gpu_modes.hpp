// Which raw jobs the GPU kernels run: every block independent (ECB and CTR
// both ways, CBC and CFB128 decryption). The one rule shared by both GPU
// backends and by --engine auto.
#pragma once

#include "paes/mode.hpp"

namespace paes::gpu {

inline bool runs_on_gpu(const CipherSpec& spec) {
  switch (spec.mode) {
    case Mode::ecb:
    case Mode::ctr:
      return true;
    case Mode::cbc:
    case Mode::cfb128:
      return spec.direction == Direction::decrypt;
    default:
      return false;
  }
}

}  // namespace paes::gpu
