#include "support/host_kernels.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "cipher/gpu/aes_kernels.h"

namespace paes::gpu {

// The ids aes_kernels.h dispatches on are Kernel's values.
static_assert(static_cast<int>(Kernel::ecb_encrypt) == PAES_KERNEL_ECB_ENCRYPT);
static_assert(static_cast<int>(Kernel::ecb_decrypt) == PAES_KERNEL_ECB_DECRYPT);
static_assert(static_cast<int>(Kernel::ctr) == PAES_KERNEL_CTR);
static_assert(static_cast<int>(Kernel::cbc_decrypt) == PAES_KERNEL_CBC_DECRYPT);
static_assert(static_cast<int>(Kernel::cfb128_decrypt) == PAES_KERNEL_CFB128_DECRYPT);
static_assert(kKernelCount == 5);

void run_host_kernel(Kernel kernel, const std::uint8_t* in, std::uint8_t* out,
                     std::uint64_t nbytes, std::uint64_t first_block, const std::uint32_t* state,
                     const std::uint32_t* round_keys, int rounds, const std::uint32_t* tables,
                     std::uint64_t block_from, std::uint64_t block_to) {
  if (rounds != 10 && rounds != 12 && rounds != 14) {
    throw std::invalid_argument("run_host_kernel: rounds must be 10, 12 or 14, got " +
                                std::to_string(rounds));
  }
  const int id = static_cast<int>(kernel);
  // This call's own "local memory", filled as by a work-group of one
  // work-item: calls share nothing, so concurrent ones need no lock.
  std::vector<paes_u32> local_tables(PAES_KERNEL_LOCAL_WORDS(id));
  paes_fill_kernel_tables(id, local_tables.data(), tables, 0, 1);
  const paes_u32x4 st = paes_make_u32x4(state[0], state[1], state[2], state[3]);
  const std::uint64_t end = std::min(block_to, paes_kernel_blocks(id, nbytes));
  for (std::uint64_t b = block_from; b < end; ++b) {
    // The column of the work-item that runs block b on a device: its
    // grid-stride loop gives it blocks congruent to its lane mod 32.
    const paes_u32* column = local_tables.data() + b % PAES_TABLE_LANES;
    paes_kernel_block(id, b, in, out, nbytes, first_block, st, column, round_keys, rounds);
  }
}

}  // namespace paes::gpu
