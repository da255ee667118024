#include "support/host_kernels.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "cipher/gpu/aes_kernels.h"

namespace paes::gpu {

void run_host_kernel(Kernel kernel, const std::uint8_t* in, std::uint8_t* out,
                     std::uint64_t nbytes, std::uint64_t first_block, const std::uint32_t* state,
                     const std::uint32_t* round_keys, int rounds, const std::uint32_t* tables,
                     std::uint64_t block_from, std::uint64_t block_to) {
  if (rounds != 10 && rounds != 12 && rounds != 14) {
    throw std::invalid_argument("run_host_kernel: rounds must be 10, 12 or 14, got " +
                                std::to_string(rounds));
  }
  const bool decrypting = uses_decrypt_keys(kernel);
  const bool partial_last = kernel == Kernel::ctr || kernel == Kernel::cfb128_decrypt;
  // This call's own "local memory", filled as by a work-group of one
  // work-item: calls share nothing, so concurrent ones need no lock.
  std::vector<paes_u32> local_tables(decrypting ? PAES_DECRYPT_LOCAL_WORDS
                                                : PAES_ENCRYPT_LOCAL_WORDS);
  if (decrypting) {
    paes_fill_decrypt_tables(local_tables.data(), tables, 0, 1);
  } else {
    paes_fill_encrypt_tables(local_tables.data(), tables, 0, 1);
  }
  const paes_u32x4 st = paes_make_u32x4(state[0], state[1], state[2], state[3]);
  const std::uint64_t end =
      std::min(block_to, partial_last ? paes_all_blocks(nbytes) : paes_whole_blocks(nbytes));
  for (std::uint64_t b = block_from; b < end; ++b) {
    // The column of the work-item that runs block b on a device: its
    // grid-stride loop gives it blocks congruent to its lane mod 32.
    const paes_u32* column = local_tables.data() + b % PAES_TABLE_LANES;
    switch (kernel) {
      case Kernel::ecb_encrypt:
        paes_ecb_encrypt_body(b, in, out, column, round_keys, rounds);
        break;
      case Kernel::ecb_decrypt:
        paes_ecb_decrypt_body(b, in, out, column, round_keys, rounds);
        break;
      case Kernel::ctr:
        paes_ctr_body(b, in, out, nbytes, first_block, st, column, round_keys, rounds);
        break;
      case Kernel::cbc_decrypt:
        paes_cbc_decrypt_body(b, in, out, st, column, round_keys, rounds);
        break;
      case Kernel::cfb128_decrypt:
        paes_cfb128_decrypt_body(b, in, out, nbytes, st, column, round_keys, rounds);
        break;
    }
  }
}

}  // namespace paes::gpu
