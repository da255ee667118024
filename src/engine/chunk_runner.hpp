// What every engine does to one chunk, and the helpers engines share.
#pragma once

#include <cstdint>
#include <exception>
#include <mutex>
#include <vector>

#include "paes/cipher.hpp"
#include "paes/io.hpp"
#include "paes/plan.hpp"

namespace paes {

// A chunk is streamed in pieces of at most plan.piece_len() bytes: one piece
// for a parallel plan, many for the single chunk of a sequential one.
struct Piece {
  std::uint64_t offset = 0;  // in the input
  std::size_t len = 0;
  bool final = false;  // the last piece of the message: padding applies here
};
std::uint64_t piece_count(const ChunkPlan& plan, const Chunk& chunk);
Piece piece(const ChunkPlan& plan, const Chunk& chunk, std::uint64_t index);

// Reads the chunk's start state (and lookback bytes) from `in`, then reads,
// transforms and writes each of its pieces in turn. `scratch` is the calling
// worker's buffer, grown as needed; memory sources and sinks bypass it.
// Returns the bytes written. Throws Error.
std::uint64_t run_chunk(const ChunkPlan& plan, const Chunk& chunk, ChunkCipher& cipher,
                        Source& in, Sink& out, std::vector<std::uint8_t>& scratch);

// Keeps the first exception thrown by any of several workers, so the job
// fails with the error that caused it rather than a consequence of it.
class FirstError {
 public:
  void capture() noexcept;
  bool failed() const noexcept;
  void rethrow() const;

 private:
  mutable std::mutex mutex_;
  std::exception_ptr error_;
};

}  // namespace paes
