// What an engine runs: a message cut into chunks, and per-thread workers that
// transform one chunk each. A job knows a format's or a mode's mathematics;
// an engine knows only how to move chunks between threads, files and streams.
//
// A chunk's geometry depends only on its index, except the last chunk's
// length, which depends on where the input ends. That is what lets the same
// job run over a file of known length (in any order, in parallel) and over a
// pipe, where the end is discovered by reading.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "paes/backend_choice.hpp"
#include "paes/mode.hpp"
#include "paes/secret.hpp"

namespace paes {

struct Chunk {
  std::uint64_t index = 0;
  std::uint64_t in_offset = 0;
  std::uint64_t in_len = 0;
  std::uint64_t out_offset = 0;
  bool last = false;
};

class ChunkWorker {
 public:
  virtual ~ChunkWorker() = default;
  // Transforms `chunk` from `in` (its in_len bytes; unless this is the first
  // chunk, the job's lookback_len() input bytes before them are readable just
  // below `in`) into `out`, which holds out_capacity(chunk) bytes and may be
  // `in`. Returns the bytes produced. Throws Error (bad padding, failed
  // authentication).
  virtual std::size_t transform(const Chunk& chunk, std::uint8_t* out, const std::uint8_t* in) = 0;
};

class Job {
 public:
  virtual ~Job() = default;
  // Whether chunks may run in any order on any number of workers. Otherwise
  // they run in order on one worker, which carries state from one to the next.
  virtual bool parallel() const = 0;
  // Input bytes just before a chunk that its worker reads (see ChunkWorker).
  virtual std::size_t lookback_len() const = 0;
  // Where chunk `index` starts in the input, and how long it is unless the
  // input ends first.
  virtual std::uint64_t in_offset(std::uint64_t index) const = 0;
  virtual std::uint64_t nominal_in_len(std::uint64_t index) const = 0;
  // Chunk `index` holding `in_len` input bytes, the last chunk if `last`.
  virtual Chunk chunk(std::uint64_t index, std::uint64_t in_len, bool last) const = 0;
  // Output bytes a worker may produce for the chunk: never fewer than its
  // in_len, so that a chunk can be read into its output and transformed there.
  virtual std::size_t out_capacity(const Chunk& chunk) const = 0;
  // How many chunks an input of `input_len` bytes makes. Throws Error when no
  // valid input has that length (it was truncated, or is not of this kind).
  virtual std::uint64_t chunk_count(std::uint64_t input_len) const = 0;
  virtual std::unique_ptr<ChunkWorker> make_worker() const = 0;
  // Memory for an engine's chunk buffers from the job's cipher backend:
  // page-locked where a device copies chunks from it by DMA, so that a chunk
  // goes from the file into that memory, to the device and back with no
  // copy on the host. Null: ordinary memory serves (every CPU backend).
  // Given back with free_chunk_memory(data, bytes).
  virtual void* allocate_chunk_memory(std::size_t /*bytes*/) const { return nullptr; }
  virtual void free_chunk_memory(void* /*data*/, std::size_t /*bytes*/) const noexcept {}
  // Everything another process needs to rebuild this job (job_from_ticket),
  // its backend included, for MPI ranks. It holds key material: it is
  // SecretBytes for that reason.
  virtual SecretBytes ticket() const = 0;
  // The cipher backend that runs its chunks, as it was resolved when the job
  // was made (a backend's name, and a GPU's device), for reports and
  // tickets; an empty name for a job with no AES of paes' (a test's).
  virtual BackendChoice backend() const { return {std::string(), std::nullopt}; }
};

// The backend a ticket's job runs on (its backend()).
BackendChoice ticket_backend(const SecretBytes& ticket);
// Rebuilds a job from ticket() bytes on `backend` (the ticket's own, or the
// one an MPI rank runs instead: its own GPU, or auto where its host can't
// run the ticket's); the job owns its key. Throws Error on malformed bytes,
// and check_backend_choice's usage Errors.
std::unique_ptr<Job> job_from_ticket(const SecretBytes& ticket, const BackendChoice& backend);
std::unique_ptr<Job> job_from_ticket(const SecretBytes& ticket);

// Chunk `index` of an input of known length that makes `count` chunks.
Chunk chunk_of(const Job& job, std::uint64_t input_len, std::uint64_t count, std::uint64_t index);

// The output length bound of a whole input: the last chunk's out_offset plus
// its out_capacity. Throws like chunk_count().
std::uint64_t output_capacity(const Job& job, std::uint64_t input_len);

}  // namespace paes
