// CUDA kernels of paes: the kernel bodies of aes_kernels.h run over device
// buffers, one kernel per parallel direction, and the host functions that
// launch them (declared for the CUDA device in cuda_device.cpp).
//
// Every kernel has the arguments aes_kernels.h describes, as its OpenCL twin
// in kernels.cl has, with the round keys by value (rk) and Nr a template
// parameter. Where things live, and why:
// - The round keys travel by value as a kernel parameter. Parameters sit in
//   the constant bank, so every thread of a warp reading the same key word is
//   one broadcast, exactly like a __constant__ array; unlike one, a parameter
//   belongs to its launch, so lanes on several streams, devices or threads
//   never see each other's keys and nothing needs wiping on the device.
// - The tables are copied from the global image into __shared__ memory by
//   each thread block, replicated once per bank so that no look-up time
//   depends on the data (aes_core.h): 32 KiB for the encrypting kernels,
//   40 KiB for the decrypting ones, static, so under the 48 KiB that needs no
//   opt-in. A thread reads the column of its lane, threadIdx.x % 32, which is
//   its lane in the warp since the device launches whole warps.
// - Nr is a template parameter, so the rounds unroll completely (the core's
//   PAES_UNROLL asks for it: NVVM would not on its own) and every round-key
//   index is a constant.
// - A grid-stride loop: thread g takes blocks g, g + G, g + 2G, ... (G the
//   number of threads launched, about blocks / blocks-per-thread). Neighbouring
//   threads touch neighbouring 16-byte blocks, so the 128-bit loads and stores
//   of a warp coalesce into whole 512-byte segments, and each thread amortises
//   the table copy over several blocks.
// That skeleton is written once (run_kernel); each kernel names which of
// aes_kernels.h's five it is (PAES_KERNEL), and the kernel id, a template
// constant, leaves only that kernel's work in the loop.
#include <cuda_runtime.h>

#include <cstdint>

#include "cipher/gpu/aes_kernels.h"

namespace paes::gpu {

namespace {

struct RoundKeyParam {
  paes_u32 w[PAES_MAX_ROUND_KEY_WORDS];
};

__device__ __forceinline__ std::uint64_t global_thread() {
  return static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ std::uint64_t thread_count() {
  return static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
}

// The skeleton of every kernel: the thread block fills its replicated tables,
// then each thread runs its blocks of the grid-stride loop through kernel K
// with Nr = NR, reading its lane's column of the tables.
template <int K, int NR>
__device__ __forceinline__ void run_kernel(const uint4* __restrict__ in, uint4* __restrict__ out,
                                           std::uint64_t nbytes, std::uint64_t first_block,
                                           uint4 state, const paes_u32* rk,
                                           const paes_u32* __restrict__ tables) {
  __shared__ paes_u32 local_tables[PAES_KERNEL_LOCAL_WORDS(K)];
  paes_fill_kernel_tables(K, local_tables, tables, threadIdx.x, blockDim.x);
  __syncthreads();
  const paes_u32* column = local_tables + threadIdx.x % PAES_TABLE_LANES;
  const std::uint64_t nblocks = paes_kernel_blocks(K, nbytes);
  for (std::uint64_t b = global_thread(); b < nblocks; b += thread_count()) {
    paes_kernel_block(K, b, in, out, nbytes, first_block, state, column, rk, NR);
  }
}

// A kernel of aes_kernels.h under a name of its own (what profilers and
// bench/gpu/kernel_ops.py show), Nr its template parameter.
#define PAES_KERNEL(name, kernel)                                                                  \
  template <int NR>                                                                                \
  __global__ void name(const uint4* __restrict__ in, uint4* __restrict__ out, std::uint64_t nbytes, \
                       std::uint64_t first_block, uint4 state, RoundKeyParam rk,                   \
                       const paes_u32* __restrict__ tables) {                                      \
    run_kernel<kernel, NR>(in, out, nbytes, first_block, state, rk.w, tables);                     \
  }

PAES_KERNEL(ecb_encrypt_kernel, PAES_KERNEL_ECB_ENCRYPT)
PAES_KERNEL(ecb_decrypt_kernel, PAES_KERNEL_ECB_DECRYPT)
PAES_KERNEL(ctr_kernel, PAES_KERNEL_CTR)
PAES_KERNEL(cbc_decrypt_kernel, PAES_KERNEL_CBC_DECRYPT)
PAES_KERNEL(cfb128_decrypt_kernel, PAES_KERNEL_CFB128_DECRYPT)

#undef PAES_KERNEL

using KernelFn = void (*)(const uint4*, uint4*, std::uint64_t, std::uint64_t, uint4,
                          RoundKeyParam, const paes_u32*);

// Launches one of the three instantiations of a kernel template and returns
// cudaGetLastError(): launch-configuration errors (too many threads, too many
// resources) show up there, not as a return value of <<<>>>. That last error
// is the calling host thread's, so lanes on other threads never see this
// launch's error nor this one theirs; but it keeps any error an earlier
// call on the thread left unread (the caller's own CUDA code, a failure some
// cleanup ignored), which is read and dropped before the launch so that
// what comes back is this launch's alone. A sticky error (a kernel fault)
// survives that and fails the launch, as it should: the context is gone.
cudaError_t launch(KernelFn k10, KernelFn k12, KernelFn k14, unsigned grid, unsigned threads,
                   cudaStream_t stream, const void* in, void* out, std::uint64_t nbytes,
                   std::uint64_t first_block, const std::uint32_t* state,
                   const std::uint32_t* round_keys, int rounds, const std::uint32_t* tables) {
  KernelFn k = rounds == 10 ? k10 : rounds == 12 ? k12 : rounds == 14 ? k14 : nullptr;
  if (k == nullptr) return cudaErrorInvalidValue;
  RoundKeyParam rk{};
  for (int i = 0; i < 4 * (rounds + 1); ++i) rk.w[i] = round_keys[i];
  const uint4 st = make_uint4(state[0], state[1], state[2], state[3]);
  (void)cudaGetLastError();
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
