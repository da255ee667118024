// CUDA kernels of paes: the portable AES core (aes_core.h) run over device
// buffers, one kernel per parallel direction, and the host functions that
// launch them (declared for the engine in engine/gpu/cuda_engine.cpp).
//
// Every kernel has the arguments of its OpenCL twin in kernels.cl:
//   in, out      the batch's input and output (distinct buffers: CBC and CFB
//                read the ciphertext block before their own)
//   nbytes       bytes to transform; only CTR and CFB may end in a partial
//                block, ECB and CBC get whole blocks from the host
//   first_block  index of the batch's first block in the message (CTR)
//   state        big-endian words: the CTR counter of block 0 of the message,
//                or for CBC/CFB the ciphertext block before the batch
//   rk           round keys (encryption or equivalent-inverse), by value
//   tables       the PAES_TABLE_WORDS table image, copied into __shared__ first
//
// Where things live, and why:
// - The round keys travel by value as a kernel parameter. Parameters sit in
//   the constant bank, so every thread of a warp reading the same key word is
//   one broadcast, exactly like a __constant__ array; unlike one, a parameter
//   belongs to its launch, so engines on several streams, devices or threads
//   never see each other's keys and nothing needs wiping on the device.
// - The tables (1 KiB for encryption, 2 KiB for decryption) are copied from
//   global memory into __shared__ memory by each thread block; the core then
//   reads them there (NVVM sees through the generic pointers after inlining).
// - Nr is a template parameter, so the rounds unroll completely and every
//   round-key index is a constant.
// - A grid-stride loop: thread g takes blocks g, g + G, g + 2G, ... (G the
//   number of threads launched, about blocks / blocks-per-thread). Neighbouring
//   threads touch neighbouring 16-byte blocks, so the 128-bit loads and stores
//   of a warp coalesce into whole 512-byte segments, and each thread amortises
//   the table copy over several blocks.
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/aes_core.h"

namespace paes::gpu {

namespace {

struct RoundKeyParam {
  paes_u32 w[PAES_MAX_ROUND_KEY_WORDS];
};

// Copies one 256-word table from the image into shared memory, spread over
// the thread block. Callers put __syncthreads() after the last copy.
__device__ __forceinline__ void load_table(paes_u32* dst, const paes_u32* __restrict__ tables,
                                           int offset) {
  for (unsigned i = threadIdx.x; i < 256; i += blockDim.x) dst[i] = __ldg(tables + offset + i);
}

__device__ __forceinline__ void load_words(uint4 v, paes_u32* s) {
  s[0] = PAES_BE32(v.x);
  s[1] = PAES_BE32(v.y);
  s[2] = PAES_BE32(v.z);
  s[3] = PAES_BE32(v.w);
}

__device__ __forceinline__ uint4 store_words(const paes_u32* s) {
  return make_uint4(PAES_BE32(s[0]), PAES_BE32(s[1]), PAES_BE32(s[2]), PAES_BE32(s[3]));
}

__device__ __forceinline__ uint4 xor4(uint4 a, uint4 b) {
  return make_uint4(a.x ^ b.x, a.y ^ b.y, a.z ^ b.z, a.w ^ b.w);
}

__device__ __forceinline__ std::uint64_t global_thread() {
  return static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ std::uint64_t thread_count() {
  return static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
}

// XORs the keystream block ks into block b of in, writing out; a partial last
// block (b == nbytes / 16) goes byte by byte so nothing past nbytes is touched.
__device__ __forceinline__ void xor_block(const uint4* __restrict__ in, uint4* __restrict__ out,
                                          std::uint64_t b, std::uint64_t nbytes,
                                          const paes_u32* ks) {
  if ((b + 1) * 16 <= nbytes) {
    out[b] = xor4(in[b], store_words(ks));
    return;
  }
  const auto* src = reinterpret_cast<const unsigned char*>(in) + b * 16;
  auto* dst = reinterpret_cast<unsigned char*>(out) + b * 16;
  const auto n = static_cast<unsigned>(nbytes - b * 16);
  // Unrolled with a guard rather than looping to n, so that ks is indexed by
  // constants and stays in registers.
#pragma unroll
  for (unsigned j = 0; j < 16; ++j) {
    if (j < n) dst[j] = static_cast<unsigned char>(src[j] ^ (ks[j >> 2] >> (24 - 8 * (j & 3))));
  }
}

template <int NR>
__global__ void ecb_encrypt_kernel(const uint4* __restrict__ in, uint4* __restrict__ out,
                                   std::uint64_t nbytes, std::uint64_t /*first_block*/,
                                   uint4 /*state*/, RoundKeyParam rk,
                                   const paes_u32* __restrict__ tables) {
  __shared__ paes_u32 te0[256];
  load_table(te0, tables, PAES_TE0_OFFSET);
  __syncthreads();
  const std::uint64_t nblocks = nbytes / 16;
  for (std::uint64_t b = global_thread(); b < nblocks; b += thread_count()) {
    paes_u32 s[4];
    load_words(in[b], s);
    paes_encrypt_block(rk.w, NR, te0, s);
    out[b] = store_words(s);
  }
}

template <int NR>
__global__ void ecb_decrypt_kernel(const uint4* __restrict__ in, uint4* __restrict__ out,
                                   std::uint64_t nbytes, std::uint64_t /*first_block*/,
                                   uint4 /*state*/, RoundKeyParam rk,
                                   const paes_u32* __restrict__ tables) {
  __shared__ paes_u32 td0[256];
  __shared__ paes_u32 td4[256];
  load_table(td0, tables, PAES_TD0_OFFSET);
  load_table(td4, tables, PAES_TD4_OFFSET);
  __syncthreads();
  const std::uint64_t nblocks = nbytes / 16;
  for (std::uint64_t b = global_thread(); b < nblocks; b += thread_count()) {
    paes_u32 s[4];
    load_words(in[b], s);
    paes_decrypt_block(rk.w, NR, td0, td4, s);
    out[b] = store_words(s);
  }
}

// CTR, both directions: out = in ^ E(counter0 + first_block + b), the counter
// a 128-bit big-endian sum with full carry (paes_counter_add), kept in
// registers.
template <int NR>
__global__ void ctr_kernel(const uint4* __restrict__ in, uint4* __restrict__ out,
                           std::uint64_t nbytes, std::uint64_t first_block, uint4 state,
                           RoundKeyParam rk, const paes_u32* __restrict__ tables) {
  __shared__ paes_u32 te0[256];
  load_table(te0, tables, PAES_TE0_OFFSET);
  __syncthreads();
  const paes_u32 iv[4] = {state.x, state.y, state.z, state.w};
  const std::uint64_t nblocks = (nbytes + 15) / 16;
  for (std::uint64_t b = global_thread(); b < nblocks; b += thread_count()) {
    paes_u32 ks[4];
    paes_counter_add(iv, first_block + b, ks);
    paes_encrypt_block(rk.w, NR, te0, ks);
    xor_block(in, out, b, nbytes, ks);
  }
}

// CBC decryption: P[b] = D(C[b]) ^ C[b-1], C[-1] = state.
template <int NR>
__global__ void cbc_decrypt_kernel(const uint4* __restrict__ in, uint4* __restrict__ out,
                                   std::uint64_t nbytes, std::uint64_t /*first_block*/,
                                   uint4 state, RoundKeyParam rk,
                                   const paes_u32* __restrict__ tables) {
  __shared__ paes_u32 td0[256];
  __shared__ paes_u32 td4[256];
  load_table(td0, tables, PAES_TD0_OFFSET);
  load_table(td4, tables, PAES_TD4_OFFSET);
  __syncthreads();
  // state holds big-endian words; turn them back into memory order.
  const uint4 iv = make_uint4(PAES_BE32(state.x), PAES_BE32(state.y), PAES_BE32(state.z),
                              PAES_BE32(state.w));
  const std::uint64_t nblocks = nbytes / 16;
  for (std::uint64_t b = global_thread(); b < nblocks; b += thread_count()) {
    paes_u32 s[4];
    load_words(in[b], s);
    paes_decrypt_block(rk.w, NR, td0, td4, s);
    out[b] = xor4(store_words(s), b == 0 ? iv : in[b - 1]);
  }
}

// CFB128 decryption: P[b] = E(C[b-1]) ^ C[b], C[-1] = state; the last block
// may be partial.
template <int NR>
__global__ void cfb128_decrypt_kernel(const uint4* __restrict__ in, uint4* __restrict__ out,
                                      std::uint64_t nbytes, std::uint64_t /*first_block*/,
                                      uint4 state, RoundKeyParam rk,
                                      const paes_u32* __restrict__ tables) {
  __shared__ paes_u32 te0[256];
  load_table(te0, tables, PAES_TE0_OFFSET);
  __syncthreads();
  const std::uint64_t nblocks = (nbytes + 15) / 16;
  for (std::uint64_t b = global_thread(); b < nblocks; b += thread_count()) {
    paes_u32 ks[4];
    if (b == 0) {
      ks[0] = state.x;
      ks[1] = state.y;
      ks[2] = state.z;
      ks[3] = state.w;
    } else {
      load_words(in[b - 1], ks);
    }
    paes_encrypt_block(rk.w, NR, te0, ks);
    xor_block(in, out, b, nbytes, ks);
  }
}

using KernelFn = void (*)(const uint4*, uint4*, std::uint64_t, std::uint64_t, uint4,
                          RoundKeyParam, const paes_u32*);

// Launches one of the three instantiations of a kernel template and returns
// cudaGetLastError(): launch-configuration errors (too many threads, too many
// resources) show up there, not as a return value of <<<>>>.
cudaError_t launch(KernelFn k10, KernelFn k12, KernelFn k14, unsigned grid, unsigned threads,
                   cudaStream_t stream, const void* in, void* out, std::uint64_t nbytes,
                   std::uint64_t first_block, const std::uint32_t* state,
                   const std::uint32_t* round_keys, int rounds, const std::uint32_t* tables) {
  KernelFn k = rounds == 10 ? k10 : rounds == 12 ? k12 : rounds == 14 ? k14 : nullptr;
  if (k == nullptr) return cudaErrorInvalidValue;
  RoundKeyParam rk{};
  for (int i = 0; i < 4 * (rounds + 1); ++i) rk.w[i] = round_keys[i];
  const uint4 st = make_uint4(state[0], state[1], state[2], state[3]);
  k<<<grid, threads, 0, stream>>>(static_cast<const uint4*>(in), static_cast<uint4*>(out), nbytes,
                                  first_block, st, rk, tables);
  // The host copy of the keys is stack memory: wipe it the way the compiler
  // can't drop (a volatile store per word).
  volatile std::uint32_t* wipe = rk.w;
  for (int i = 0; i < PAES_MAX_ROUND_KEY_WORDS; ++i) wipe[i] = 0;
  return cudaGetLastError();
}

}  // namespace

#define PAES_DEFINE_LAUNCH(name, kernel)                                                       \
  cudaError_t name(unsigned grid, unsigned threads, cudaStream_t stream, const void* in,       \
                   void* out, std::uint64_t nbytes, std::uint64_t first_block,                 \
                   const std::uint32_t* state, const std::uint32_t* round_keys, int rounds,    \
                   const std::uint32_t* tables) {                                              \
    return launch(kernel<10>, kernel<12>, kernel<14>, grid, threads, stream, in, out, nbytes,  \
                  first_block, state, round_keys, rounds, tables);                             \
  }

PAES_DEFINE_LAUNCH(launch_ecb_encrypt, ecb_encrypt_kernel)
PAES_DEFINE_LAUNCH(launch_ecb_decrypt, ecb_decrypt_kernel)
PAES_DEFINE_LAUNCH(launch_ctr, ctr_kernel)
PAES_DEFINE_LAUNCH(launch_cbc_decrypt, cbc_decrypt_kernel)
PAES_DEFINE_LAUNCH(launch_cfb128_decrypt, cfb128_decrypt_kernel)

#undef PAES_DEFINE_LAUNCH

}  // namespace paes::gpu
