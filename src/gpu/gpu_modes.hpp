// Which raw jobs the GPU kernels run: every block independent (ECB and CTR
// both ways, CBC and CFB128 decryption), and which kernel runs each. The one
// rule shared by every GPU device, the host adapter and --engine auto.
#pragma once

#include "cipher/gpu/kernel.hpp"
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

// The kernel of a spec that runs_on_gpu.
inline Kernel kernel_for(const CipherSpec& spec) {
  switch (spec.mode) {
    case Mode::ecb: return spec.direction == Direction::encrypt ? Kernel::ecb_encrypt : Kernel::ecb_decrypt;
    case Mode::cbc: return Kernel::cbc_decrypt;
    case Mode::cfb128: return Kernel::cfb128_decrypt;
    default: return Kernel::ctr;
  }
}

}  // namespace paes::gpu
