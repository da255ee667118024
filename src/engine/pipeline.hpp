#pragma once

#include <cstdint>

#include "paes/cipher.hpp"
#include "paes/io.hpp"
#include "paes/plan.hpp"

namespace paes {

// Runs the single chunk of a sequential plan with reading, the cipher and
// writing overlapped (see the comment at the top of threads_engine.cpp).
// Returns the bytes written. Throws the first Error of any stage.
std::uint64_t run_pipelined(const ChunkPlan& plan, ChunkCipher& cipher, Source& in, Sink& out);

}  // namespace paes
