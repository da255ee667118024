/* The five GPU kernels of paes, written once: what a work-item does to one
 * block of a batch, which tables a work-group fills, and how many blocks a
 * batch has. kernels.cu (CUDA) and kernels.cl (OpenCL, which gets this text
 * after aes_core.h's) each write the kernel skeleton once around
 * paes_kernel_block (fill the tables, a barrier, the grid-stride loop) and
 * the launch glue; tests/support/host_kernels.cpp runs the same bodies on the
 * CPU. Same portable C and qualifier macros as aes_core.h.
 *
 * Every kernel takes the same arguments, so that hosts set them one way:
 *   in, out      the batch's input and output (distinct buffers: CBC and CFB
 *                read the ciphertext block before their own)
 *   nbytes       bytes to transform; only CTR and CFB may end in a partial
 *                block, ECB and CBC get whole blocks from the host
 *   first_block  index of the batch's first block in the message (CTR)
 *   state        big-endian words: the CTR counter of block 0 of the message,
 *                or for CBC/CFB the ciphertext block before the batch
 *   rk, nr       round keys (encryption or equivalent-inverse) and Nr
 *   tables       the PAES_TABLE_WORDS table image (aes_core.h)
 * A kernel first fills its work-group's replicated tables from the image
 * (paes_fill_kernel_tables, PAES_KERNEL_LOCAL_WORDS words, then a barrier),
 * then runs paes_kernel_block for each of its blocks b < paes_kernel_blocks,
 * handing it the work-item's lane column of those tables:
 * local + (index in the work-group) % PAES_TABLE_LANES. The kernel is one of
 * the PAES_KERNEL_* ids below, a literal or template constant at every call on
 * a device, so that the compiler keeps only that kernel's branch.
 */
#ifndef PAES_GPU_AES_KERNELS_H
#define PAES_GPU_AES_KERNELS_H

#if !defined(__OPENCL_VERSION__)
/* OpenCL has no include path for it: the host puts aes_core.h's text first. */
#include "cipher/gpu/aes_core.h"
#endif

/* Four words, the unit of a 128-bit load or store: uint4 on devices (CUDA
 * and OpenCL both name the lanes x, y, z, w), the same shape on the host. */
#if defined(__OPENCL_VERSION__) || defined(__CUDACC__)
typedef uint4 paes_u32x4;
#else
typedef struct {
  paes_u32 x, y, z, w;
} paes_u32x4;
#endif

PAES_DEVICE PAES_INLINE paes_u32x4 paes_make_u32x4(paes_u32 x, paes_u32 y, paes_u32 z,
                                                   paes_u32 w) {
#if defined(__OPENCL_VERSION__)
  return (uint4)(x, y, z, w);
#elif defined(__CUDACC__)
  return make_uint4(x, y, z, w);
#else
  paes_u32x4 v = {x, y, z, w};
  return v;
#endif
}

PAES_DEVICE PAES_INLINE paes_u32x4 paes_xor_u32x4(paes_u32x4 a, paes_u32x4 b) {
  return paes_make_u32x4(a.x ^ b.x, a.y ^ b.y, a.z ^ b.z, a.w ^ b.w);
}

/* The batch buffers. On devices, arrays of 16-byte blocks, each loaded and
 * stored whole: one 128-bit access, and a warp's accesses to neighbouring
 * blocks coalesce. On the host, bytes: a host buffer need not be aligned for
 * a 16-byte type, and memcpy is the load that breaks no aliasing rule. */
#if defined(__OPENCL_VERSION__)
#define PAES_IN_BLOCKS __global const uint4*
#define PAES_OUT_BLOCKS __global uint4*
#elif defined(__CUDACC__)
#define PAES_IN_BLOCKS const uint4* __restrict__
#define PAES_OUT_BLOCKS uint4* __restrict__
#else
#include <string.h>
#define PAES_IN_BLOCKS const unsigned char*
#define PAES_OUT_BLOCKS unsigned char*
#endif

PAES_DEVICE PAES_INLINE paes_u32x4 paes_load_block(PAES_IN_BLOCKS in, paes_u64 b) {
#if defined(__OPENCL_VERSION__) || defined(__CUDACC__)
  return in[b];
#else
  paes_u32x4 v;
  memcpy(&v, in + 16 * b, sizeof v);
  return v;
#endif
}

PAES_DEVICE PAES_INLINE void paes_store_block(PAES_OUT_BLOCKS out, paes_u64 b, paes_u32x4 v) {
#if defined(__OPENCL_VERSION__) || defined(__CUDACC__)
  out[b] = v;
#else
  memcpy(out + 16 * b, &v, sizeof v);
#endif
}

/* Between a block as loaded (words in memory order) and the big-endian state
 * words the core works on. */
PAES_DEVICE PAES_INLINE void paes_state_from_block(paes_u32x4 v, paes_u32* s) {
  s[0] = PAES_BE32(v.x);
  s[1] = PAES_BE32(v.y);
  s[2] = PAES_BE32(v.z);
  s[3] = PAES_BE32(v.w);
}

PAES_DEVICE PAES_INLINE paes_u32x4 paes_block_from_state(const paes_u32* s) {
  return paes_make_u32x4(PAES_BE32(s[0]), PAES_BE32(s[1]), PAES_BE32(s[2]), PAES_BE32(s[3]));
}

/* How many blocks a kernel runs over: ECB and CBC get whole blocks only, CTR
 * and CFB128 may end in a partial one. */
PAES_DEVICE PAES_INLINE paes_u64 paes_whole_blocks(paes_u64 nbytes) { return nbytes / 16; }
PAES_DEVICE PAES_INLINE paes_u64 paes_all_blocks(paes_u64 nbytes) { return (nbytes + 15) / 16; }

/* Fills `words` table words replicated into local memory: image[x] for lane l
 * at dst[x * PAES_TABLE_LANES + l]. Work-item `item` of the work-group's
 * `items` writes dst[item], dst[item + items], ...: consecutive work-items
 * write consecutive words (distinct banks), and a warp's 32 writes all read
 * one image word (one broadcast load). The caller puts a barrier after it. */
PAES_DEVICE PAES_INLINE void paes_replicate_table(PAES_TABLE_SPACE paes_u32* dst,
                                                  const PAES_GLOBAL paes_u32* image,
                                                  paes_u32 words, paes_u32 item, paes_u32 items) {
  paes_u32 i;
  for (i = item; i < words * PAES_TABLE_LANES; i += items) dst[i] = image[i / PAES_TABLE_LANES];
}

/* The local tables of the encrypting kernels (ECB encryption, CTR, CFB128
 * decryption): Te0, PAES_ENCRYPT_LOCAL_WORDS words. */
PAES_DEVICE PAES_INLINE void paes_fill_encrypt_tables(PAES_TABLE_SPACE paes_u32* local_tables,
                                                      const PAES_GLOBAL paes_u32* image,
                                                      paes_u32 item, paes_u32 items) {
  paes_replicate_table(local_tables, image + PAES_TE0_OFFSET, 256, item, items);
}

/* The local tables of the decrypting kernels (ECB and CBC decryption): Td0
 * then the packed InvS, PAES_DECRYPT_LOCAL_WORDS words. */
PAES_DEVICE PAES_INLINE void paes_fill_decrypt_tables(PAES_TABLE_SPACE paes_u32* local_tables,
                                                      const PAES_GLOBAL paes_u32* image,
                                                      paes_u32 item, paes_u32 items) {
  paes_replicate_table(local_tables, image + PAES_TD0_OFFSET, PAES_TABLE_WORDS - PAES_TD0_OFFSET,
                       item, items);
}

/* out[b] = in[b] ^ ks, ks a keystream block as state words. A partial last
 * block (b == nbytes / 16) goes byte by byte, so that nothing past nbytes is
 * read or written. */
PAES_DEVICE PAES_INLINE void paes_xor_keystream(paes_u64 b, PAES_IN_BLOCKS in, PAES_OUT_BLOCKS out,
                                                paes_u64 nbytes, const paes_u32* ks) {
  const PAES_GLOBAL unsigned char* src;
  PAES_GLOBAL unsigned char* dst;
  paes_u32 n, j;
  if ((b + 1) * 16 <= nbytes) {
    paes_store_block(out, b, paes_xor_u32x4(paes_load_block(in, b), paes_block_from_state(ks)));
    return;
  }
  src = (const PAES_GLOBAL unsigned char*)in + b * 16;
  dst = (PAES_GLOBAL unsigned char*)out + b * 16;
  n = (paes_u32)(nbytes - b * 16);
  /* Unrolled with a guard rather than looping to n, so that ks is indexed by
   * constants and stays in registers. */
  PAES_UNROLL
  for (j = 0; j < 16; ++j) {
    if (j < n) dst[j] = (unsigned char)(src[j] ^ (ks[j >> 2] >> (24 - 8 * (j & 3))));
  }
}

/* The ciphertext block before block b as state words: in[b - 1], or `chain`
 * (the kernel's state) for the batch's first block. */
PAES_DEVICE PAES_INLINE void paes_previous_block(paes_u64 b, PAES_IN_BLOCKS in, paes_u32x4 chain,
                                                 paes_u32* s) {
  if (b == 0) {
    s[0] = chain.x;
    s[1] = chain.y;
    s[2] = chain.z;
    s[3] = chain.w;
  } else {
    paes_state_from_block(paes_load_block(in, b - 1), s);
  }
}

/* The bodies. column: the work-item's lane column of the kernel's local
 * tables; rk, nr: the round keys and Nr (a literal or template constant at the
 * call, so that the rounds unroll). */

/* ECB encryption: out[b] = E(in[b]); whole blocks. */
PAES_DEVICE PAES_INLINE void paes_ecb_encrypt_body(paes_u64 b, PAES_IN_BLOCKS in,
                                                   PAES_OUT_BLOCKS out,
                                                   const PAES_TABLE_SPACE paes_u32* column,
                                                   const PAES_KEY_SPACE paes_u32* rk, int nr) {
  paes_u32 s[4];
  paes_state_from_block(paes_load_block(in, b), s);
  paes_encrypt_block(rk, nr, column, s);
  paes_store_block(out, b, paes_block_from_state(s));
}

/* ECB decryption: out[b] = D(in[b]); whole blocks. */
PAES_DEVICE PAES_INLINE void paes_ecb_decrypt_body(paes_u64 b, PAES_IN_BLOCKS in,
                                                   PAES_OUT_BLOCKS out,
                                                   const PAES_TABLE_SPACE paes_u32* column,
                                                   const PAES_KEY_SPACE paes_u32* rk, int nr) {
  paes_u32 s[4];
  paes_state_from_block(paes_load_block(in, b), s);
  paes_decrypt_block(rk, nr, column, column + PAES_LOCAL_INV_SBOX_OFFSET, s);
  paes_store_block(out, b, paes_block_from_state(s));
}

/* CTR, both directions: out[b] = in[b] ^ E(counter0 + first_block + b), the
 * counter a 128-bit big-endian sum with full carry (paes_counter_add); the
 * last block may be partial. */
PAES_DEVICE PAES_INLINE void paes_ctr_body(paes_u64 b, PAES_IN_BLOCKS in, PAES_OUT_BLOCKS out,
                                           paes_u64 nbytes, paes_u64 first_block,
                                           paes_u32x4 counter0,
                                           const PAES_TABLE_SPACE paes_u32* column,
                                           const PAES_KEY_SPACE paes_u32* rk, int nr) {
  const paes_u32 iv[4] = {counter0.x, counter0.y, counter0.z, counter0.w};
  paes_u32 ks[4];
  paes_counter_add(iv, first_block + b, ks);
  paes_encrypt_block(rk, nr, column, ks);
  paes_xor_keystream(b, in, out, nbytes, ks);
}

/* CBC decryption: out[b] = D(in[b]) ^ in[b - 1], in[-1] = chain; whole
 * blocks. */
PAES_DEVICE PAES_INLINE void paes_cbc_decrypt_body(paes_u64 b, PAES_IN_BLOCKS in,
                                                   PAES_OUT_BLOCKS out, paes_u32x4 chain,
                                                   const PAES_TABLE_SPACE paes_u32* column,
                                                   const PAES_KEY_SPACE paes_u32* rk, int nr) {
  paes_u32 s[4], prev[4];
  paes_state_from_block(paes_load_block(in, b), s);
  paes_decrypt_block(rk, nr, column, column + PAES_LOCAL_INV_SBOX_OFFSET, s);
  paes_previous_block(b, in, chain, prev);
  s[0] ^= prev[0];
  s[1] ^= prev[1];
  s[2] ^= prev[2];
  s[3] ^= prev[3];
  paes_store_block(out, b, paes_block_from_state(s));
}

/* CFB128 decryption: out[b] = in[b] ^ E(in[b - 1]), in[-1] = chain; the last
 * block may be partial. */
PAES_DEVICE PAES_INLINE void paes_cfb128_decrypt_body(paes_u64 b, PAES_IN_BLOCKS in,
                                                      PAES_OUT_BLOCKS out, paes_u64 nbytes,
                                                      paes_u32x4 chain,
                                                      const PAES_TABLE_SPACE paes_u32* column,
                                                      const PAES_KEY_SPACE paes_u32* rk, int nr) {
  paes_u32 ks[4];
  paes_previous_block(b, in, chain, ks);
  paes_encrypt_block(rk, nr, column, ks);
  paes_xor_keystream(b, in, out, nbytes, ks);
}

/* The kernels by id: the order of paes::gpu::Kernel (kernel.hpp), which
 * tests/support/host_kernels.cpp checks. (OpenCL C reserves the word
 * `kernel`, so the functions below name one `id`.) */
#define PAES_KERNEL_ECB_ENCRYPT 0
#define PAES_KERNEL_ECB_DECRYPT 1
#define PAES_KERNEL_CTR 2
#define PAES_KERNEL_CBC_DECRYPT 3
#define PAES_KERNEL_CFB128_DECRYPT 4

/* Whether kernel `id` runs the inverse cipher (ECB and CBC decryption: Td0
 * and InvS, the equivalent-inverse round keys), and so how many words its
 * local tables take; constant expressions where the id is a constant. */
#define PAES_KERNEL_DECRYPTS(id) ((id) == PAES_KERNEL_ECB_DECRYPT || (id) == PAES_KERNEL_CBC_DECRYPT)
#define PAES_KERNEL_LOCAL_WORDS(id) \
  (PAES_KERNEL_DECRYPTS(id) ? PAES_DECRYPT_LOCAL_WORDS : PAES_ENCRYPT_LOCAL_WORDS)

/* The local tables of kernel `id`, PAES_KERNEL_LOCAL_WORDS(id) words. */
PAES_DEVICE PAES_INLINE void paes_fill_kernel_tables(int id, PAES_TABLE_SPACE paes_u32* local_tables,
                                                     const PAES_GLOBAL paes_u32* image,
                                                     paes_u32 item, paes_u32 items) {
  if (PAES_KERNEL_DECRYPTS(id)) {
    paes_fill_decrypt_tables(local_tables, image, item, items);
  } else {
    paes_fill_encrypt_tables(local_tables, image, item, items);
  }
}

/* How many blocks kernel `id` runs over: CTR and CFB128 may end in a
 * partial one. */
PAES_DEVICE PAES_INLINE paes_u64 paes_kernel_blocks(int id, paes_u64 nbytes) {
  return id == PAES_KERNEL_CTR || id == PAES_KERNEL_CFB128_DECRYPT ? paes_all_blocks(nbytes)
                                                                   : paes_whole_blocks(nbytes);
}

/* Block b of a batch through kernel `id`: its body with the arguments every
 * kernel takes (top of this file) and the work-item's lane column. */
PAES_DEVICE PAES_INLINE void paes_kernel_block(int id, paes_u64 b, PAES_IN_BLOCKS in,
                                               PAES_OUT_BLOCKS out, paes_u64 nbytes,
                                               paes_u64 first_block, paes_u32x4 state,
                                               const PAES_TABLE_SPACE paes_u32* column,
                                               const PAES_KEY_SPACE paes_u32* rk, int nr) {
  switch (id) {
    case PAES_KERNEL_ECB_ENCRYPT:
      paes_ecb_encrypt_body(b, in, out, column, rk, nr);
      break;
    case PAES_KERNEL_ECB_DECRYPT:
      paes_ecb_decrypt_body(b, in, out, column, rk, nr);
      break;
    case PAES_KERNEL_CTR:
      paes_ctr_body(b, in, out, nbytes, first_block, state, column, rk, nr);
      break;
    case PAES_KERNEL_CBC_DECRYPT:
      paes_cbc_decrypt_body(b, in, out, state, column, rk, nr);
      break;
    default: /* PAES_KERNEL_CFB128_DECRYPT */
      paes_cfb128_decrypt_body(b, in, out, nbytes, state, column, rk, nr);
      break;
  }
}

#endif /* PAES_GPU_AES_KERNELS_H */
