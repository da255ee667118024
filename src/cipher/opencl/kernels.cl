/* OpenCL kernels of paes: the kernel bodies of aes_kernels.h run over device
 * buffers. The host builds them with the text of aes_core.h and aes_kernels.h
 * in front (embedded in the binary at build time), so this file includes
 * nothing.
 *
 * Every kernel has the arguments aes_kernels.h describes, in its order, so
 * the host sets them one way. Where things live, and why:
 * - The tables are copied from the global image into __local memory by each
 *   work-group, replicated once per bank so that no look-up time depends on
 *   the data (aes_core.h): PAES_ENCRYPT_LOCAL_BYTES (32 KiB) for the
 *   encrypting kernels, PAES_DECRYPT_LOCAL_BYTES (40 KiB) for the decrypting
 *   ones, which a device's CL_DEVICE_LOCAL_MEM_SIZE must hold.
 * - Work distribution: a grid-stride loop, work-item g taking blocks g, g + G,
 *   g + 2G, ... (G the global size, which the host sets to about
 *   blocks / blocks-per-item). Neighbouring work-items thus touch neighbouring
 *   16-byte blocks, so loads and stores coalesce, while each work-item still
 *   amortises the table copy over several blocks.
 * That skeleton is written once (PAES_KERNEL); each kernel names which of
 * aes_kernels.h's five it is, a literal that leaves only that kernel's work
 * in the loop.
 */

/* Calls body(..., nr) with a literal Nr, so that after inlining the compiler
 * can unroll the rounds completely (the branch is uniform across the launch). */
#define PAES_WITH_LITERAL_NR(body, nr, ...)     \
  do {                                          \
    if ((nr) == 10) body(__VA_ARGS__, 10);      \
    else if ((nr) == 12) body(__VA_ARGS__, 12); \
    else body(__VA_ARGS__, 14);                 \
  } while (0)

/* The kernel `name`, running aes_kernels.h's kernel `id` (a PAES_KERNEL_*
 * constant): the work-group fills its replicated tables (a __local array must be
 * declared in the kernel itself, hence a macro), then each work-item runs its
 * blocks of the grid-stride loop, reading its lane's column of the tables. */
#define PAES_KERNEL(name, id)                                                                      \
  __kernel void name(__global const uint4 *in, __global uint4 *out, ulong nbytes,                  \
                     ulong first_block, uint4 state, __constant uint *rk, int nr,                  \
                     __global const uint *tables) {                                                \
    __local uint local_tables[PAES_KERNEL_LOCAL_WORDS(id)];                                        \
    paes_fill_kernel_tables(id, local_tables, tables, (uint)get_local_id(0),                       \
                            (uint)get_local_size(0));                                              \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    __local const uint *column = local_tables + get_local_id(0) % PAES_TABLE_LANES;                \
    const ulong nblocks = paes_kernel_blocks(id, nbytes);                                          \
    for (ulong b = get_global_id(0); b < nblocks; b += get_global_size(0)) {                       \
      PAES_WITH_LITERAL_NR(paes_kernel_block, nr, id, b, in, out, nbytes, first_block, state,      \
                           column, rk);                                                            \
    }                                                                                              \
  }

PAES_KERNEL(paes_ecb_encrypt, PAES_KERNEL_ECB_ENCRYPT)
PAES_KERNEL(paes_ecb_decrypt, PAES_KERNEL_ECB_DECRYPT)
PAES_KERNEL(paes_ctr, PAES_KERNEL_CTR)
PAES_KERNEL(paes_cbc_decrypt, PAES_KERNEL_CBC_DECRYPT)
PAES_KERNEL(paes_cfb128_decrypt, PAES_KERNEL_CFB128_DECRYPT)
