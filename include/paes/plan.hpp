// How one raw-mode message splits into chunks, and the state each chunk starts
// from. This is the only place that knows which raw modes are parallel
// (docs/ARCHITECTURE.md, "Which work is parallel"):
//
//   ECB         both directions parallel; a chunk needs nothing
//   CTR         both directions parallel; counter = IV + first block index
//   CBC, CFB*   decrypt parallel; a chunk needs the 16 ciphertext bytes before it
//               (the IV for the first chunk); encrypt is sequential
//   OFB         sequential both ways
//
// A sequential job is cut into pieces that one worker transforms in order with
// one cipher context, so it still runs at full speed on one core and never
// produces non-standard ciphertext.
#pragma once

#include <cstdint>
#include <string_view>

#include <optional>

#include "paes/backend_choice.hpp"
#include "paes/job.hpp"
#include "paes/mode.hpp"

namespace paes {

class CipherBackend;  // internal: the library (a CPU's or a GPU's) a plan's workers run

class ChunkPlan final : public Job {
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

  // The chunk length for an input of `input_len` bytes on `workers` threads:
  // default_chunk_len(mode), made smaller (down to a quarter of it) so that
  // each worker gets about kChunksPerWorker chunks. With one chunk per worker,
  // as 16 MiB in 1 MiB chunks on 16 threads gave, the job lasts as long as
  // its slowest worker; with several, the others take up the slack. The
  // floor keeps a chunk long against the cost of handing it over.
  static constexpr unsigned kChunksPerWorker = 4;
  static std::uint64_t fitted_chunk_len(Mode mode, std::uint64_t input_len, unsigned workers);

  // The one rule for a plan's chunk length. `requested` (16 to kMaxChunkLen,
  // rounded down to whole blocks) where the caller gave one; else what the
  // backend prefers (`backend_preference`, a GPU's batch) where it has a
  // preference; else, for an input of known length that `workers` threads
  // will share (0: an engine that doesn't fit chunks to threads, or a length
  // unknown), fitted_chunk_len; else default_chunk_len(mode). Throws a usage
  // Error for a requested length out of range.
  static std::uint64_t decide_chunk_len(Mode mode, std::uint64_t requested, std::uint64_t backend_preference,
                                        std::optional<std::uint64_t> input_len = std::nullopt, unsigned workers = 0);

  // A plan of `spec` (the plan keeps its own copy of the key and IV) whose
  // workers run on `backend` (resolved here, once: raw_backend), in chunks of
  // decide_chunk_len(spec.mode, chunk_len, the backend's preference). Throws
  // a usage Error for a chunk length out of range or a backend refused
  // (check_backend_choice).
  ChunkPlan(const CipherSpec& spec, std::uint64_t chunk_len, const BackendChoice& backend = {});
  // The same on a backend already resolved (the front door's, auto's GPU, the
  // tests' devices).
  ChunkPlan(const CipherSpec& spec, std::uint64_t chunk_len, const CipherBackend& backend);
  ChunkPlan(ChunkPlan&&) = default;

  std::uint64_t chunk_len() const { return chunk_len_; }
  const CipherSpec& spec() const { return spec_; }
  // The cipher backend its workers run.
  BackendChoice backend() const override;
  // What a worker transforms at a time: the chunk length of a parallel plan.
  // A sequential plan's pieces are at least kDefaultChunkLen, since its chunk
  // size buys no parallelism and tiny pieces would only add hand-offs.
  std::uint64_t piece_len() const { return piece_len_; }

  // Output length before padding is removed (exact for everything but padded
  // decryption, where the true length is known only after the last block).
  std::uint64_t max_output_len(std::uint64_t input_len) const;

  // The IV to start a chunk's cipher context with. `preceding` points at the
  // lookback_len() input bytes before the chunk; it is ignored (and may be
  // null) for the first chunk and for modes with no lookback.
  Block start_state(const Chunk& chunk, const std::uint8_t* preceding) const;

  // Job. chunk_count() throws Error when the input length is impossible for
  // the spec (ECB/CBC ciphertext or --no-pad plaintext not whole blocks,
  // padded ciphertext that is empty).
  bool parallel() const override { return parallel_; }
  std::size_t lookback_len() const override { return lookback_len_; }
  std::uint64_t in_offset(std::uint64_t index) const override { return index * piece_len_; }
  std::uint64_t nominal_in_len(std::uint64_t) const override { return piece_len_; }
  Chunk chunk(std::uint64_t index, std::uint64_t in_len, bool last) const override;
  std::size_t out_capacity(const Chunk& chunk) const override;
  std::uint64_t chunk_count(std::uint64_t input_len) const override;
  std::unique_ptr<ChunkWorker> make_worker() const override;
  void* allocate_chunk_memory(std::size_t bytes) const override;
  void free_chunk_memory(void* data, std::size_t bytes) const noexcept override;
  SecretBytes ticket() const override;

 private:
  CipherSpec spec_;
  const CipherBackend* backend_;
  std::uint64_t chunk_len_;
  std::uint64_t piece_len_;
  std::size_t lookback_len_;
  bool parallel_;
};

// Whether a mode's direction can run its chunks independently.
bool is_parallel(Mode mode, Direction direction);

}  // namespace paes
