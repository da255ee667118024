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
 */

/* Calls body(..., nr) with a literal Nr, so that after inlining the compiler
 * can unroll the rounds completely (the branch is uniform across the launch). */
#define PAES_WITH_LITERAL_NR(body, nr, ...)     \
  do {                                          \
    if ((nr) == 10) body(__VA_ARGS__, 10);      \
    else if ((nr) == 12) body(__VA_ARGS__, 12); \
    else body(__VA_ARGS__, 14);                 \
  } while (0)

#define PAES_KERNEL_ARGS                                                          \
  __global const uint4 *in, __global uint4 *out, ulong nbytes, ulong first_block, \
      uint4 state, __constant uint *rk, int nr, __global const uint *tables

/* The work-item's column of its work-group's local tables. */
inline __local const uint *paes_lane_column(__local const uint *local_tables) {
  return local_tables + get_local_id(0) % PAES_TABLE_LANES;
}

__kernel void paes_ecb_encrypt(PAES_KERNEL_ARGS) {
  __local uint local_tables[PAES_ENCRYPT_LOCAL_WORDS];
  paes_fill_encrypt_tables(local_tables, tables, (uint)get_local_id(0), (uint)get_local_size(0));
  barrier(CLK_LOCAL_MEM_FENCE);
  __local const uint *column = paes_lane_column(local_tables);
  const ulong nblocks = paes_whole_blocks(nbytes);
  for (ulong b = get_global_id(0); b < nblocks; b += get_global_size(0)) {
    PAES_WITH_LITERAL_NR(paes_ecb_encrypt_body, nr, b, in, out, column, rk);
  }
}

__kernel void paes_ecb_decrypt(PAES_KERNEL_ARGS) {
  __local uint local_tables[PAES_DECRYPT_LOCAL_WORDS];
  paes_fill_decrypt_tables(local_tables, tables, (uint)get_local_id(0), (uint)get_local_size(0));
  barrier(CLK_LOCAL_MEM_FENCE);
  __local const uint *column = paes_lane_column(local_tables);
  const ulong nblocks = paes_whole_blocks(nbytes);
  for (ulong b = get_global_id(0); b < nblocks; b += get_global_size(0)) {
    PAES_WITH_LITERAL_NR(paes_ecb_decrypt_body, nr, b, in, out, column, rk);
  }
}

__kernel void paes_ctr(PAES_KERNEL_ARGS) {
  __local uint local_tables[PAES_ENCRYPT_LOCAL_WORDS];
  paes_fill_encrypt_tables(local_tables, tables, (uint)get_local_id(0), (uint)get_local_size(0));
  barrier(CLK_LOCAL_MEM_FENCE);
  __local const uint *column = paes_lane_column(local_tables);
  const ulong nblocks = paes_all_blocks(nbytes);
  for (ulong b = get_global_id(0); b < nblocks; b += get_global_size(0)) {
    PAES_WITH_LITERAL_NR(paes_ctr_body, nr, b, in, out, nbytes, first_block, state, column, rk);
  }
}

__kernel void paes_cbc_decrypt(PAES_KERNEL_ARGS) {
  __local uint local_tables[PAES_DECRYPT_LOCAL_WORDS];
  paes_fill_decrypt_tables(local_tables, tables, (uint)get_local_id(0), (uint)get_local_size(0));
  barrier(CLK_LOCAL_MEM_FENCE);
  __local const uint *column = paes_lane_column(local_tables);
  const ulong nblocks = paes_whole_blocks(nbytes);
  for (ulong b = get_global_id(0); b < nblocks; b += get_global_size(0)) {
    PAES_WITH_LITERAL_NR(paes_cbc_decrypt_body, nr, b, in, out, state, column, rk);
  }
}

__kernel void paes_cfb128_decrypt(PAES_KERNEL_ARGS) {
  __local uint local_tables[PAES_ENCRYPT_LOCAL_WORDS];
  paes_fill_encrypt_tables(local_tables, tables, (uint)get_local_id(0), (uint)get_local_size(0));
  barrier(CLK_LOCAL_MEM_FENCE);
  __local const uint *column = paes_lane_column(local_tables);
  const ulong nblocks = paes_all_blocks(nbytes);
  for (ulong b = get_global_id(0); b < nblocks; b += get_global_size(0)) {
    PAES_WITH_LITERAL_NR(paes_cfb128_decrypt_body, nr, b, in, out, nbytes, state, column, rk);
  }
}
