#pragma once

#include <cstdint>

#include "engine/feed.hpp"
#include "paes/engine.hpp"

namespace paes {

// Runs a job as an ordered pipeline (see the comment at the top of
// pipeline.cpp): a reader thread, `workers` cipher threads and an in-order
// writer thread, with a bounded number of chunks in flight. A sequential job
// must be given one worker. Returns the bytes written; throws the first Error
// of any stage.
std::uint64_t run_pipeline(const Job& job, ChunkFeed& feed, ChunkDrain& drain, unsigned workers,
                           const ProgressCallback& progress);

}  // namespace paes
