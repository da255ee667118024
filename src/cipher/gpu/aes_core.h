/* The AES block cipher core shared by every GPU path of paes.
 *
 * Written once in the subset of C that compiles as OpenCL C (the host prepends
 * this text to kernels.cl), as CUDA device code and as host C/C++ (where the
 * unit tests check it against OpenSSL). Only the qualifier macros below differ
 * between targets; everything else is plain C99 without library calls.
 *
 * Conventions are those of the reference implementation (rijndael-alg-fst.c):
 * the state is four 32-bit words, word i holding bytes 4i..4i+3 of the block
 * big-endian; round keys are 4 * (Nr + 1) such words; the decryption keys are
 * those of the equivalent inverse cipher (FIPS-197 5.3.5), in reverse round
 * order with InvMixColumns applied to rounds 1..Nr-1 (cipher/gpu/key_schedule).
 *
 * Tables are passed by pointer, never named globals, so a kernel can hand in
 * copies it made in local/shared memory. They are generated on the host
 * (cipher/gpu/aes_tables) and uploaded as one image of PAES_TABLE_WORDS words:
 *   [PAES_TE0_OFFSET]      Te0[x] = (2s, s, s, 3s)        s = S[x]
 *   [PAES_TD0_OFFSET]      Td0[x] = (e*t, 9*t, d*t, b*t)  t = InvS[x]
 *   [PAES_INV_SBOX_OFFSET] InvS packed 4 to a word: InvS[4i + j] is byte j
 *                          (bits 8j..8j+7) of word i, 64 words
 * Te1..Te3 and Td1..Td3 are byte rotations of Te0 and Td0, and a rotate is a
 * single instruction on GPUs (funnel shift / byte permute); the encryption
 * last round needs no S-box table, S[x] being a byte of Te0[x].
 *
 * The core reads every table replicated once per memory bank. Shared/local
 * memory has 32 banks of 4-byte words; a warp's 32 reads of one table
 * complete in one pass only when they hit 32 distinct banks, and which banks
 * a table look-up hits depends on the data. So a single shared table makes
 * the time of every round depend on the key and the data. Jiang, Fei and
 * Kaeli showed that a warp's timing leaks T-table AES keys on a GPU ("A
 * complete key recovery timing attack on a GPU", HPCA 2016, through how many
 * memory transactions a warp's look-ups coalesce into) and then did the same
 * through shared-memory bank conflicts (GLSVLSI 2017); the conflicts also cap
 * the kernel's speed. Replicated, entry x of a table sits for lane l at word
 * x * PAES_TABLE_LANES + l, bank l, and each work-item reads only its own
 * lane's column (lane = its index in the work-group mod 32): a warp's reads
 * always fall in 32 distinct banks, whatever the data. The core is handed a
 * column (the table plus the lane) and reads entry x at x * PAES_TABLE_LANES.
 * Te0 and Td0 so take 32 KiB each and the packed InvS 8 KiB: 32 KiB of local
 * memory for the encrypting kernels, 40 KiB for the decrypting ones, under
 * CUDA's 48 KiB limit on static shared memory (aes_kernels.h fills them).
 */
#ifndef PAES_GPU_AES_CORE_H
#define PAES_GPU_AES_CORE_H

#if defined(__OPENCL_VERSION__)
/* OpenCL C: pointers need an address space; the kernels use __local tables
 * and __constant round keys unless they define otherwise before this text. */
#define PAES_GLOBAL __global
#define PAES_LOCAL __local
#define PAES_CONSTANT __constant
#define PAES_DEVICE
#define PAES_INLINE inline
typedef uint paes_u32;
typedef ulong paes_u64;
#ifdef __ENDIAN_LITTLE__
#define PAES_LITTLE_ENDIAN 1
#endif
#elif defined(__CUDACC__)
/* CUDA: pointers are generic, so the address-space qualifiers vanish; the
 * kernels put the tables in __shared__ arrays and pass them in. */
#define PAES_GLOBAL
#define PAES_LOCAL
#define PAES_CONSTANT
#define PAES_DEVICE __device__
#define PAES_INLINE __forceinline__
typedef unsigned int paes_u32;
typedef unsigned long long paes_u64;
#define PAES_LITTLE_ENDIAN 1 /* every CUDA device is little-endian */
#else
/* Host C or C++: the unit tests and any CPU reference use. */
#include <stdint.h>
#define PAES_GLOBAL
#define PAES_LOCAL
#define PAES_CONSTANT
#define PAES_DEVICE
#define PAES_INLINE static inline
typedef uint32_t paes_u32;
typedef uint64_t paes_u64;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PAES_LITTLE_ENDIAN 1
#endif
#endif

/* Where the core reads its tables and round keys from. A kernel that keeps
 * them elsewhere (say tables in __global) defines these before this text. */
#ifndef PAES_TABLE_SPACE
#define PAES_TABLE_SPACE PAES_LOCAL
#endif
#ifndef PAES_KEY_SPACE
#define PAES_KEY_SPACE PAES_CONSTANT
#endif

#define PAES_TE0_OFFSET 0
#define PAES_TD0_OFFSET 256
#define PAES_INV_SBOX_OFFSET 512
#define PAES_TABLE_WORDS 576

/* The replicated tables in local memory (see above): Te0 for the encrypting
 * kernels; Td0 then InvS for the decrypting ones, i.e. the image's words from
 * PAES_TD0_OFFSET on. An engine checks the bytes against the device's local
 * memory (CL_DEVICE_LOCAL_MEM_SIZE) before choosing it. */
#define PAES_TABLE_LANES 32
#define PAES_ENCRYPT_LOCAL_WORDS (256 * PAES_TABLE_LANES)
#define PAES_DECRYPT_LOCAL_WORDS ((PAES_TABLE_WORDS - PAES_TD0_OFFSET) * PAES_TABLE_LANES)
#define PAES_ENCRYPT_LOCAL_BYTES (4 * PAES_ENCRYPT_LOCAL_WORDS) /* 32 KiB */
#define PAES_DECRYPT_LOCAL_BYTES (4 * PAES_DECRYPT_LOCAL_WORDS) /* 40 KiB */
/* Where the InvS column starts in a decrypting kernel's local tables. */
#define PAES_LOCAL_INV_SBOX_OFFSET ((PAES_INV_SBOX_OFFSET - PAES_TD0_OFFSET) * PAES_TABLE_LANES)
#define PAES_MAX_ROUND_KEY_WORDS 60 /* AES-256: 4 * (14 + 1) */

/* Unrolls the loop that follows completely once its trip count is a
 * constant (Nr as a literal or template argument, after inlining): round-key
 * indices become constants and the loop counter goes. The device compilers
 * weigh a whole round too heavy to unroll unasked; the host compilers need
 * no hint (and would warn about an unknown pragma). */
#if defined(__OPENCL_VERSION__) || defined(__CUDACC__)
#define PAES_UNROLL _Pragma("unroll")
#else
#define PAES_UNROLL
#endif

/* Written as shifts so that every compiler sees the rotate idiom (LLVM, NVVM
 * and GCC all emit one rotate / funnel-shift instruction for it). */
#define PAES_ROTR8(x) (((x) >> 8) | ((x) << 24))
#define PAES_ROTR16(x) (((x) >> 16) | ((x) << 16))
#define PAES_ROTR24(x) (((x) >> 24) | ((x) << 8))

/* Between a word as loaded from memory on this device and the big-endian word
 * the cipher works on. */
PAES_DEVICE PAES_INLINE paes_u32 paes_bswap32(paes_u32 x) {
  return (x >> 24) | ((x >> 8) & 0x0000ff00u) | ((x << 8) & 0x00ff0000u) | (x << 24);
}
#ifdef PAES_LITTLE_ENDIAN
#define PAES_BE32(x) paes_bswap32(x)
#else
#define PAES_BE32(x) (x)
#endif

/* The CUDA kernels form their look-ups with __byte_perm and inline PTX
 * (below), unless built with PAES_CUDA_PORTABLE_LOOKUPS (the CMake option of
 * that name): then they compile the portable C the host and OpenCL compile,
 * which is slower (893 integer instructions an AES-128 CTR block on sm_90
 * against 503) but the fallback should a driver mishandle the PTX, and the
 * other half of measuring what the PTX buys (docs/GPU.md). */
#if defined(__CUDA_ARCH__) && !defined(PAES_CUDA_PORTABLE_LOOKUPS)
#define PAES_CUDA_FAST_LOOKUPS 1
#endif

/* Byte k of w (k = 0: the least significant), as a table index. The look-ups
 * are all a round does, and on a GPU the integer pipe, not shared memory, is
 * what bounds them, so each instruction of an index counts: CUDA picks a byte
 * with one byte permute (PRMT) where shifting and masking take two. */
#if defined(PAES_CUDA_FAST_LOOKUPS)
#define PAES_BYTE(w, k) __byte_perm((w), 0u, 0x4440u | (k))
#else
#define PAES_BYTE(w, k) (((w) >> (8 * (k))) & 0xffu)
#endif

/* Entry x of a replicated table, read through the caller's lane column.
 * CUDA: the address is formed as the column's shared-memory address plus
 * x * 128 bytes, one multiply-add off the integer pipe, and read with one
 * ld.shared. Left to itself, the compiler knows the column is the table plus
 * the lane (< 32) and rewrites the sum as ((x << 5) | lane) scaled by 4:
 * three integer instructions a look-up instead of none (ptxas -v and
 * cuobjdump -sass on sm_90: 893 integer-pipe instructions an AES-128 CTR
 * block before, 503 after). The memory clobber keeps the reads after the
 * barrier that ends the tables' fill. */
PAES_DEVICE PAES_INLINE paes_u32 paes_entry(const PAES_TABLE_SPACE paes_u32* column, paes_u32 x) {
#if defined(PAES_CUDA_FAST_LOOKUPS)
  const unsigned address = (unsigned)__cvta_generic_to_shared(column) + x * (4u * PAES_TABLE_LANES);
  paes_u32 word;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(word) : "r"(address) : "memory");
  return word;
#else
  return column[x * PAES_TABLE_LANES];
#endif
}

/* InvS[x] from the lane column of the packed, replicated InvS. */
PAES_DEVICE PAES_INLINE paes_u32 paes_inv_sbox(const PAES_TABLE_SPACE paes_u32* column,
                                               paes_u32 x) {
  return (paes_entry(column, x >> 2) >> (8 * (x & 3))) & 0xffu;
}

/* One AES block in place: s[0..3] plaintext words in, ciphertext words out.
 * rk: 4 * (nr + 1) encryption round-key words; te0: the caller's lane column
 * of the replicated Te0. */
PAES_DEVICE PAES_INLINE void paes_encrypt_block(const PAES_KEY_SPACE paes_u32* rk, int nr,
                                                const PAES_TABLE_SPACE paes_u32* te0,
                                                paes_u32* s) {
  paes_u32 s0 = s[0] ^ rk[0];
  paes_u32 s1 = s[1] ^ rk[1];
  paes_u32 s2 = s[2] ^ rk[2];
  paes_u32 s3 = s[3] ^ rk[3];
  paes_u32 t0, t1, t2, t3;
  int r;
  PAES_UNROLL
  for (r = 1; r < nr; ++r) {
    rk += 4;
    /* ShiftRows picks column c's bytes from columns c, c+1, c+2, c+3;
     * SubBytes and MixColumns are the table look-ups. */
    t0 = paes_entry(te0, s0 >> 24) ^ PAES_ROTR8(paes_entry(te0, PAES_BYTE(s1, 2))) ^
         PAES_ROTR16(paes_entry(te0, PAES_BYTE(s2, 1))) ^ PAES_ROTR24(paes_entry(te0, PAES_BYTE(s3, 0))) ^
         rk[0];
    t1 = paes_entry(te0, s1 >> 24) ^ PAES_ROTR8(paes_entry(te0, PAES_BYTE(s2, 2))) ^
         PAES_ROTR16(paes_entry(te0, PAES_BYTE(s3, 1))) ^ PAES_ROTR24(paes_entry(te0, PAES_BYTE(s0, 0))) ^
         rk[1];
    t2 = paes_entry(te0, s2 >> 24) ^ PAES_ROTR8(paes_entry(te0, PAES_BYTE(s3, 2))) ^
         PAES_ROTR16(paes_entry(te0, PAES_BYTE(s0, 1))) ^ PAES_ROTR24(paes_entry(te0, PAES_BYTE(s1, 0))) ^
         rk[2];
    t3 = paes_entry(te0, s3 >> 24) ^ PAES_ROTR8(paes_entry(te0, PAES_BYTE(s0, 2))) ^
         PAES_ROTR16(paes_entry(te0, PAES_BYTE(s1, 1))) ^ PAES_ROTR24(paes_entry(te0, PAES_BYTE(s2, 0))) ^
         rk[3];
    s0 = t0;
    s1 = t1;
    s2 = t2;
    s3 = t3;
  }
  rk += 4;
  /* Last round, no MixColumns: S[x] is byte 2 (and byte 1) of Te0[x]. */
  s[0] = ((paes_entry(te0, s0 >> 24) << 8) & 0xff000000u) ^
         (paes_entry(te0, PAES_BYTE(s1, 2)) & 0x00ff0000u) ^
         (paes_entry(te0, PAES_BYTE(s2, 1)) & 0x0000ff00u) ^
         ((paes_entry(te0, PAES_BYTE(s3, 0)) >> 8) & 0x000000ffu) ^ rk[0];
  s[1] = ((paes_entry(te0, s1 >> 24) << 8) & 0xff000000u) ^
         (paes_entry(te0, PAES_BYTE(s2, 2)) & 0x00ff0000u) ^
         (paes_entry(te0, PAES_BYTE(s3, 1)) & 0x0000ff00u) ^
         ((paes_entry(te0, PAES_BYTE(s0, 0)) >> 8) & 0x000000ffu) ^ rk[1];
  s[2] = ((paes_entry(te0, s2 >> 24) << 8) & 0xff000000u) ^
         (paes_entry(te0, PAES_BYTE(s3, 2)) & 0x00ff0000u) ^
         (paes_entry(te0, PAES_BYTE(s0, 1)) & 0x0000ff00u) ^
         ((paes_entry(te0, PAES_BYTE(s1, 0)) >> 8) & 0x000000ffu) ^ rk[2];
  s[3] = ((paes_entry(te0, s3 >> 24) << 8) & 0xff000000u) ^
         (paes_entry(te0, PAES_BYTE(s0, 2)) & 0x00ff0000u) ^
         (paes_entry(te0, PAES_BYTE(s1, 1)) & 0x0000ff00u) ^
         ((paes_entry(te0, PAES_BYTE(s2, 0)) >> 8) & 0x000000ffu) ^ rk[3];
}

/* One AES block in place with the equivalent inverse cipher: s[0..3]
 * ciphertext words in, plaintext words out. rk: 4 * (nr + 1) decryption
 * round-key words; td0, inv_sbox: the caller's lane columns of the
 * replicated Td0 and packed InvS. */
PAES_DEVICE PAES_INLINE void paes_decrypt_block(const PAES_KEY_SPACE paes_u32* rk, int nr,
                                                const PAES_TABLE_SPACE paes_u32* td0,
                                                const PAES_TABLE_SPACE paes_u32* inv_sbox,
                                                paes_u32* s) {
  paes_u32 s0 = s[0] ^ rk[0];
  paes_u32 s1 = s[1] ^ rk[1];
  paes_u32 s2 = s[2] ^ rk[2];
  paes_u32 s3 = s[3] ^ rk[3];
  paes_u32 t0, t1, t2, t3;
  int r;
  PAES_UNROLL
  for (r = 1; r < nr; ++r) {
    rk += 4;
    /* InvShiftRows picks column c's bytes from columns c, c-1, c-2, c-3. */
    t0 = paes_entry(td0, s0 >> 24) ^ PAES_ROTR8(paes_entry(td0, PAES_BYTE(s3, 2))) ^
         PAES_ROTR16(paes_entry(td0, PAES_BYTE(s2, 1))) ^ PAES_ROTR24(paes_entry(td0, PAES_BYTE(s1, 0))) ^
         rk[0];
    t1 = paes_entry(td0, s1 >> 24) ^ PAES_ROTR8(paes_entry(td0, PAES_BYTE(s0, 2))) ^
         PAES_ROTR16(paes_entry(td0, PAES_BYTE(s3, 1))) ^ PAES_ROTR24(paes_entry(td0, PAES_BYTE(s2, 0))) ^
         rk[1];
    t2 = paes_entry(td0, s2 >> 24) ^ PAES_ROTR8(paes_entry(td0, PAES_BYTE(s1, 2))) ^
         PAES_ROTR16(paes_entry(td0, PAES_BYTE(s0, 1))) ^ PAES_ROTR24(paes_entry(td0, PAES_BYTE(s3, 0))) ^
         rk[2];
    t3 = paes_entry(td0, s3 >> 24) ^ PAES_ROTR8(paes_entry(td0, PAES_BYTE(s2, 2))) ^
         PAES_ROTR16(paes_entry(td0, PAES_BYTE(s1, 1))) ^ PAES_ROTR24(paes_entry(td0, PAES_BYTE(s0, 0))) ^
         rk[3];
    s0 = t0;
    s1 = t1;
    s2 = t2;
    s3 = t3;
  }
  rk += 4;
  /* Last round, no InvMixColumns: InvShiftRows and InvSubBytes alone. */
  s[0] = (paes_inv_sbox(inv_sbox, s0 >> 24) << 24) ^
         (paes_inv_sbox(inv_sbox, PAES_BYTE(s3, 2)) << 16) ^
         (paes_inv_sbox(inv_sbox, PAES_BYTE(s2, 1)) << 8) ^ paes_inv_sbox(inv_sbox, PAES_BYTE(s1, 0)) ^
         rk[0];
  s[1] = (paes_inv_sbox(inv_sbox, s1 >> 24) << 24) ^
         (paes_inv_sbox(inv_sbox, PAES_BYTE(s0, 2)) << 16) ^
         (paes_inv_sbox(inv_sbox, PAES_BYTE(s3, 1)) << 8) ^ paes_inv_sbox(inv_sbox, PAES_BYTE(s2, 0)) ^
         rk[1];
  s[2] = (paes_inv_sbox(inv_sbox, s2 >> 24) << 24) ^
         (paes_inv_sbox(inv_sbox, PAES_BYTE(s1, 2)) << 16) ^
         (paes_inv_sbox(inv_sbox, PAES_BYTE(s0, 1)) << 8) ^ paes_inv_sbox(inv_sbox, PAES_BYTE(s3, 0)) ^
         rk[2];
  s[3] = (paes_inv_sbox(inv_sbox, s3 >> 24) << 24) ^
         (paes_inv_sbox(inv_sbox, PAES_BYTE(s2, 2)) << 16) ^
         (paes_inv_sbox(inv_sbox, PAES_BYTE(s1, 1)) << 8) ^ paes_inv_sbox(inv_sbox, PAES_BYTE(s0, 0)) ^
         rk[3];
}

/* The CTR counter block of block `index`: iv + index as one 128-bit
 * big-endian integer, carrying through all 16 bytes and wrapping at 2^128,
 * as OpenSSL does. iv and out are big-endian words. */
PAES_DEVICE PAES_INLINE void paes_counter_add(const paes_u32* iv, paes_u64 index, paes_u32* out) {
  paes_u64 lo = (((paes_u64)iv[2]) << 32) | (paes_u64)iv[3];
  paes_u64 hi = (((paes_u64)iv[0]) << 32) | (paes_u64)iv[1];
  paes_u64 sum = lo + index;
  hi += (sum < lo) ? 1u : 0u;
  out[0] = (paes_u32)(hi >> 32);
  out[1] = (paes_u32)hi;
  out[2] = (paes_u32)(sum >> 32);
  out[3] = (paes_u32)sum;
}

#endif /* PAES_GPU_AES_CORE_H */
