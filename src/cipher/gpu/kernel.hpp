// The five GPU kernels, named once: the device seam (device.hpp), the host
// bodies (host_kernels.hpp) and the engines' rule of which job runs which
// kernel (gpu/gpu_modes.hpp) all name them, and one program may include
// all three.
#pragma once

namespace paes::gpu {

// The five kernels (cipher/cuda/kernels.cu, cipher/opencl/kernels.cl, and on
// the host host_kernels.hpp), in the order of their names in kKernelNames.
enum class Kernel { ecb_encrypt, ecb_decrypt, ctr, cbc_decrypt, cfb128_decrypt };
inline constexpr int kKernelCount = 5;

// ECB and CBC decryption run the inverse cipher, with its round keys; CTR and
// CFB128 decryption encrypt a counter or the previous block.
inline bool uses_decrypt_keys(Kernel kernel) { return kernel == Kernel::ecb_decrypt || kernel == Kernel::cbc_decrypt; }

}  // namespace paes::gpu
