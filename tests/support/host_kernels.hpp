// The GPU kernels run on the CPU: the bodies of aes_kernels.h over host
// buffers, for a host "device" that lets the GPU driver be tested (under ASan
// and TSan too) where there is no GPU, and for the unit tests of the bodies.
// A test path: it is as slow as one work-item after another.
#pragma once

#include <cstdint>

#include "cipher/gpu/kernel.hpp"

namespace paes::gpu {

// Runs `kernel` on the CPU over blocks [block_from, block_to) of a batch, as the
// device's work-items would (same bodies, same tables, lane = block % 32), with the
// arguments of the device kernels: in/out (distinct buffers), nbytes, first_block,
// state (4 big-endian words), round_keys (4 * (rounds + 1) words), rounds (10/12/14),
// tables (the uploaded table image, aes_tables().image.data()).
// Blocks past the batch's last one are skipped, as a device's grid-stride loop
// skips them. Calls share nothing, so threads may run it at once on disjoint
// block ranges of one batch. Throws std::invalid_argument when rounds is not
// 10, 12 or 14.
void run_host_kernel(Kernel kernel, const std::uint8_t* in, std::uint8_t* out,
                     std::uint64_t nbytes, std::uint64_t first_block, const std::uint32_t* state,
                     const std::uint32_t* round_keys, int rounds, const std::uint32_t* tables,
                     std::uint64_t block_from, std::uint64_t block_to);

}  // namespace paes::gpu
