/* OpenCL kernels of paes. The host builds them with the text of aes_core.h in
 * front (embedded in the binary at build time), so this file includes nothing.
 *
 * Every kernel has the same arguments, so the host sets them one way:
 *   in, out      the batch's input and output (distinct buffers: CBC and CFB
 *                read the ciphertext block before their own)
 *   nbytes       bytes to transform; only CTR and CFB may end in a partial
 *                block, ECB and CBC get whole blocks from the host
 *   first_block  index of the batch's first block in the message (CTR)
 *   state        big-endian words: the CTR counter of block 0 of the message,
 *                or for CBC/CFB the ciphertext block before the batch
 *   rk, nr       round keys (encryption or equivalent-inverse) and Nr
 *   tables       the PAES_TABLE_WORDS table image, copied into __local first
 *
 * Work distribution: a grid-stride loop, work-item g taking blocks g, g + G,
 * g + 2G, ... (G the global size, which the host sets to about
 * blocks / blocks-per-item). Neighbouring work-items thus touch neighbouring
 * 16-byte blocks, so loads and stores coalesce, while each work-item still
 * amortises the table copy over several blocks.
 */

/* Calls the core with a literal Nr, so that after inlining the compiler can
 * unroll the rounds completely (the branch is uniform across the launch). */
#define PAES_ENCRYPT(rk, nr, te0, s)                                \
  do {                                                              \
    if ((nr) == 10) paes_encrypt_block((rk), 10, (te0), (s));       \
    else if ((nr) == 12) paes_encrypt_block((rk), 12, (te0), (s));  \
    else paes_encrypt_block((rk), 14, (te0), (s));                  \
  } while (0)
#define PAES_DECRYPT(rk, nr, td0, td4, s)                                \
  do {                                                                   \
    if ((nr) == 10) paes_decrypt_block((rk), 10, (td0), (td4), (s));     \
    else if ((nr) == 12) paes_decrypt_block((rk), 12, (td0), (td4), (s)); \
    else paes_decrypt_block((rk), 14, (td0), (td4), (s));                \
  } while (0)

#define PAES_KERNEL_ARGS                                                          \
  __global const uint4 *in, __global uint4 *out, ulong nbytes, ulong first_block, \
      uint4 state, __constant uint *rk, int nr, __global const uint *tables

/* Copies one 256-word table from the image into local memory, spread over the
 * work-group. Callers put a barrier after the last copy. */
inline void paes_load_table(__local uint *dst, __global const uint *tables, int offset) {
  for (size_t i = get_local_id(0); i < 256; i += get_local_size(0)) dst[i] = tables[offset + i];
}

inline void paes_load_words(uint4 v, uint *s) {
  s[0] = PAES_BE32(v.x);
  s[1] = PAES_BE32(v.y);
  s[2] = PAES_BE32(v.z);
  s[3] = PAES_BE32(v.w);
}

inline uint4 paes_store_words(const uint *s) {
  return (uint4)(PAES_BE32(s[0]), PAES_BE32(s[1]), PAES_BE32(s[2]), PAES_BE32(s[3]));
}

/* XORs the keystream block ks into block b of in, writing out; a partial last
 * block (b == nbytes / 16) goes byte by byte so nothing past nbytes is touched. */
inline void paes_xor_block(__global const uint4 *in, __global uint4 *out, ulong b, ulong nbytes,
                           const uint *ks) {
  if ((b + 1) * 16 <= nbytes) {
    out[b] = in[b] ^ paes_store_words(ks);
    return;
  }
  __global const uchar *src = (__global const uchar *)in + b * 16;
  __global uchar *dst = (__global uchar *)out + b * 16;
  const uint n = (uint)(nbytes - b * 16);
  for (uint j = 0; j < n; ++j) {
    dst[j] = src[j] ^ (uchar)(ks[j >> 2] >> (24 - 8 * (j & 3)));
  }
}

__kernel void paes_ecb_encrypt(PAES_KERNEL_ARGS) {
  __local uint te0[256];
  paes_load_table(te0, tables, PAES_TE0_OFFSET);
  barrier(CLK_LOCAL_MEM_FENCE);
  const ulong nblocks = nbytes / 16;
  for (ulong b = get_global_id(0); b < nblocks; b += get_global_size(0)) {
    uint s[4];
    paes_load_words(in[b], s);
    PAES_ENCRYPT(rk, nr, te0, s);
    out[b] = paes_store_words(s);
  }
}

__kernel void paes_ecb_decrypt(PAES_KERNEL_ARGS) {
  __local uint td0[256];
  __local uint td4[256];
  paes_load_table(td0, tables, PAES_TD0_OFFSET);
  paes_load_table(td4, tables, PAES_TD4_OFFSET);
  barrier(CLK_LOCAL_MEM_FENCE);
  const ulong nblocks = nbytes / 16;
  for (ulong b = get_global_id(0); b < nblocks; b += get_global_size(0)) {
    uint s[4];
    paes_load_words(in[b], s);
    PAES_DECRYPT(rk, nr, td0, td4, s);
    out[b] = paes_store_words(s);
  }
}

/* CTR, both directions: out = in ^ E(counter0 + first_block + b). */
__kernel void paes_ctr(PAES_KERNEL_ARGS) {
  __local uint te0[256];
  paes_load_table(te0, tables, PAES_TE0_OFFSET);
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint iv[4] = {state.x, state.y, state.z, state.w};
  const ulong nblocks = (nbytes + 15) / 16;
  for (ulong b = get_global_id(0); b < nblocks; b += get_global_size(0)) {
    uint ks[4];
    /* A message's block index fits 64 bits; adding it to the 128-bit counter
     * carries through all 16 bytes (paes_counter_add). */
    paes_counter_add(iv, first_block + b, ks);
    PAES_ENCRYPT(rk, nr, te0, ks);
    paes_xor_block(in, out, b, nbytes, ks);
  }
}

/* CBC decryption: P[b] = D(C[b]) ^ C[b-1], C[-1] = state. */
__kernel void paes_cbc_decrypt(PAES_KERNEL_ARGS) {
  __local uint td0[256];
  __local uint td4[256];
  paes_load_table(td0, tables, PAES_TD0_OFFSET);
  paes_load_table(td4, tables, PAES_TD4_OFFSET);
  barrier(CLK_LOCAL_MEM_FENCE);
  const ulong nblocks = nbytes / 16;
  for (ulong b = get_global_id(0); b < nblocks; b += get_global_size(0)) {
    uint s[4];
    paes_load_words(in[b], s);
    PAES_DECRYPT(rk, nr, td0, td4, s);
    /* state holds big-endian words; turn them back into memory order. */
    const uint4 prev = b == 0 ? (uint4)(PAES_BE32(state.x), PAES_BE32(state.y),
                                        PAES_BE32(state.z), PAES_BE32(state.w))
                              : in[b - 1];
    out[b] = paes_store_words(s) ^ prev;
  }
}

/* CFB128 decryption: P[b] = E(C[b-1]) ^ C[b], C[-1] = state; the last block
 * may be partial. */
__kernel void paes_cfb128_decrypt(PAES_KERNEL_ARGS) {
  __local uint te0[256];
  paes_load_table(te0, tables, PAES_TE0_OFFSET);
  barrier(CLK_LOCAL_MEM_FENCE);
  const ulong nblocks = (nbytes + 15) / 16;
  for (ulong b = get_global_id(0); b < nblocks; b += get_global_size(0)) {
    uint ks[4];
    if (b == 0) {
      ks[0] = state.x;
      ks[1] = state.y;
      ks[2] = state.z;
      ks[3] = state.w;
    } else {
      paes_load_words(in[b - 1], ks);
    }
    PAES_ENCRYPT(rk, nr, te0, ks);
    paes_xor_block(in, out, b, nbytes, ks);
  }
}
