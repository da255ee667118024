// The five GPU kernels, apart from the Device they run on, so that the kernel
// bodies on the host (tests/support/host_kernels.hpp) and every device name
// the same ones.
#pragma once

namespace paes::gpu {

// The five kernels (each API's kernels file beside cipher/gpu/, and in the
// tests tests/support/host_kernels.hpp), in the order of their names in
// kKernelNames and of their ids in aes_kernels.h (PAES_KERNEL_*).
enum class Kernel { ecb_encrypt, ecb_decrypt, ctr, cbc_decrypt, cfb128_decrypt };
inline constexpr int kKernelCount = 5;

// ECB and CBC decryption run the inverse cipher, with its round keys; CTR and
// CFB128 decryption encrypt a counter or the previous block.
inline bool uses_decrypt_keys(Kernel kernel) { return kernel == Kernel::ecb_decrypt || kernel == Kernel::cbc_decrypt; }

}  // namespace paes::gpu
