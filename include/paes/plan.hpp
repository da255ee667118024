// How one message splits into chunks for a mode and direction, and the state
// each chunk starts from. This is the only place that knows which modes are
// parallel (DESIGN.md, "Which work is parallel"):
//
//   ECB         both directions parallel; a chunk needs nothing
//   CTR         both directions parallel; counter = IV + first block index
//   CBC, CFB*   decrypt parallel; a chunk needs the 16 ciphertext bytes before it
//               (the IV for the first chunk); encrypt is sequential
//   OFB         sequential both ways
//
// A sequential job is one chunk spanning the whole message; engines stream it
// through in pieces with one cipher context, so it still runs at full speed on
// one core and never produces non-standard ciphertext.
#pragma once

#include <cstdint>

#include "paes/mode.hpp"

namespace paes {

struct Chunk {
  std::uint64_t index = 0;
  std::uint64_t in_offset = 0;
  std::uint64_t in_len = 0;
  std::uint64_t out_offset = 0;  // equals in_offset: padding only ever grows the end
  bool last = false;
};

class ChunkPlan {
 public:
  // Default chunk size of the modes that run at full AES speed (about 4 GB/s a
  // core): small inputs stay on one thread, and large files see no gain from
  // bigger chunks. docs/PERFORMANCE.md has the measurements behind it.
  static constexpr std::uint64_t kDefaultChunkLen = 1u << 20;
  static constexpr std::uint64_t kMaxChunkLen = 1u << 30;
  // Passed as chunk_len: use default_chunk_len(mode).
  static constexpr std::uint64_t kAutoChunkLen = 0;

  // kDefaultChunkLen scaled by the mode's cost per byte, so a chunk is about
  // the same time of work in every mode: CFB8 runs one AES per byte and CFB1
  // one per bit, so their chunks are smaller and a 1 MiB CFB1 job, a quarter
  // of a second of work, still spreads over every thread.
  static std::uint64_t default_chunk_len(Mode mode);

  // Throws Error when the input length is impossible for the spec (ECB/CBC
  // ciphertext or --no-pad plaintext not a multiple of 16), and a usage Error
  // when chunk_len is below 16 or above kMaxChunkLen (kAutoChunkLen aside).
  // chunk_len is rounded down to a whole number of blocks.
  ChunkPlan(const CipherSpec& spec, std::uint64_t input_len, std::uint64_t chunk_len);

  bool parallel() const { return parallel_; }
  std::uint64_t input_len() const { return input_len_; }
  std::uint64_t chunk_len() const { return chunk_len_; }
  // The most bytes an engine transforms at a time: the chunk length of a
  // parallel plan. A sequential plan's single chunk is streamed in pieces of
  // at least kDefaultChunkLen, since its chunk size buys no parallelism and
  // tiny pieces would only add hand-offs between the pipeline's threads.
  std::uint64_t piece_len() const;
  std::uint64_t chunk_count() const { return chunk_count_; }
  Chunk chunk(std::uint64_t index) const;

  // Output length before padding is removed (exact for everything but padded
  // decryption, where the true length is known only after the last block).
  std::uint64_t max_output_len() const;

  // Bytes of input just before a chunk that its start state is made of: 16 for
  // CBC/CFB decryption, 0 otherwise. Engines read them along with the chunk.
  std::size_t lookback_len() const { return lookback_len_; }
  // The IV to start a chunk's cipher context with. `preceding` points at the
  // lookback_len() input bytes before the chunk; it is ignored (and may be
  // null) for the first chunk and for modes with no lookback.
  Block start_state(const Chunk& chunk, const std::uint8_t* preceding) const;

 private:
  Mode mode_;
  Direction direction_;
  Block iv_;
  bool padded_;
  std::uint64_t input_len_;
  std::uint64_t chunk_len_;
  std::uint64_t chunk_count_;
  std::size_t lookback_len_;
  bool parallel_;
};

// Whether a mode's direction can run its chunks independently.
bool is_parallel(Mode mode, Direction direction);

// counter + blocks, as a 128-bit big-endian integer with carry into every byte
// and wrap at 2^128: what OpenSSL's CTR does to its counter block.
Block add_to_counter(const Block& counter, std::uint64_t blocks);

}  // namespace paes
