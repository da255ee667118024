// A segmented AEAD stream as an engine's Job: the one parallel machinery
// under both sealed bodies. A SegmentStream says how its segments lie and
// which codec (cipher/segment_codec.hpp) seals them; SegmentJob cuts the
// stream into an engine's chunks of whole segments, runs each segment at its
// own index and last flag, and checks the lengths a stream can have.
//   Tink's body (TinkSegments): segment 0 shorter by the Tink header that
//     precedes it, every segment segment_len bytes of ciphertext, one
//     segment a chunk;
//   age's payload (AgeChunks, format/age_format.hpp): 64 KiB plaintext
//     chunks, sixteen to an engine's chunk.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cipher/segment_codec.hpp"
#include "job/ticket.hpp"
#include "paes/job.hpp"
#include "paes/mode.hpp"

namespace paes {

class SegmentStream {
 public:
  virtual ~SegmentStream() = default;
  // Plaintext bytes of segment 0, and of each segment after it; the final
  // segment may hold fewer. Each segment's ciphertext is 16 bytes more.
  virtual std::uint64_t first_plain_len() const = 0;
  virtual std::uint64_t plain_len() const = 0;
  // Segments in an engine's chunk: small segments are grouped so that a
  // worker's unit of work stays near a mebibyte.
  virtual std::uint64_t segments_per_chunk() const = 0;
  // Whether an empty final segment may follow a full one when opening: a
  // Tink reader takes it, age refuses it (its writers never make one).
  virtual bool empty_final_after_full() const = 0;
  // The most segments a stream may have (its nonces' room), and the Error
  // for more.
  virtual std::uint64_t max_segments() const = 0;
  virtual Error too_many_segments() const = 0;
  // What a segment is called in messages ("segment", age's "chunk").
  virtual const char* unit() const = 0;
  virtual std::unique_ptr<SegmentCodec> make_codec(Direction direction) const = 0;
  // The stream's ticket after TicketWriter::start (Job::ticket), and the
  // backend that runs it (an empty name: no AES of paes').
  virtual SecretBytes ticket(Direction direction) const = 0;
  virtual BackendChoice backend() const = 0;
};

// Tink's AES-GCM-HKDF body (format/sealed_format.hpp has its header).
class TinkSegments final : public SegmentStream {
 public:
  TinkSegments(std::size_t key_len, std::uint32_t segment_len, const SecretBytes& segment_key,
               const NoncePrefix& prefix, const CipherBackend& backend);
  std::uint64_t first_plain_len() const override { return segment_len_ - header_len_ - kTagLen; }
  std::uint64_t plain_len() const override { return segment_len_ - kTagLen; }
  std::uint64_t segments_per_chunk() const override { return 1; }
  bool empty_final_after_full() const override { return true; }
  std::uint64_t max_segments() const override { return std::uint64_t{1} << 32; }
  Error too_many_segments() const override;
  const char* unit() const override { return "segment"; }
  std::unique_ptr<SegmentCodec> make_codec(Direction direction) const override;
  SecretBytes ticket(Direction direction) const override;
  BackendChoice backend() const override;

 private:
  std::uint32_t segment_len_;
  std::uint64_t header_len_;
  SecretBytes segment_key_;
  NoncePrefix prefix_;
  const CipherBackend* backend_;
};

// The segments of a stream as a Job: sealing takes plaintext to ciphertext
// segments; opening the reverse. Offsets are relative to the first segment
// (just after the Tink header, or age's payload nonce) on the ciphertext side.
// Each worker has its own codec of the stream.
class SegmentJob final : public Job {
 public:
  SegmentJob(Direction direction, std::shared_ptr<const SegmentStream> stream);
  // Tink's body, on `backend` (segment_backend of the caller's choice).
  SegmentJob(Direction direction, std::size_t key_len, std::uint32_t segment_len,
             const SecretBytes& segment_key, const NoncePrefix& prefix, const CipherBackend& backend);
  // The same on the backend `backend` resolves to (segment_backend).
  SegmentJob(Direction direction, std::size_t key_len, std::uint32_t segment_len,
             const SecretBytes& segment_key, const NoncePrefix& prefix, const BackendChoice& backend = {});
  SegmentJob(SegmentJob&&) = default;

  bool parallel() const override { return true; }
  std::size_t lookback_len() const override { return 0; }
  std::uint64_t in_offset(std::uint64_t index) const override;
  std::uint64_t nominal_in_len(std::uint64_t index) const override;
  // Throws the stream's Error for a chunk past its last possible segment:
  // its nonce would repeat an earlier one.
  Chunk chunk(std::uint64_t index, std::uint64_t in_len, bool last) const override;
  std::size_t out_capacity(const Chunk& chunk) const override;
  // Throws Error for a ciphertext length no sealing makes ("truncated"), and
  // for more segments than the stream's nonces allow.
  std::uint64_t chunk_count(std::uint64_t input_len) const override;
  // Opening: the plaintext bytes of a body of `ciphertext_len` bytes (a
  // length chunk_count takes; it throws as chunk_count for others), and the
  // segments it holds.
  std::uint64_t plaintext_len(std::uint64_t ciphertext_len) const;
  std::uint64_t segment_count(std::uint64_t ciphertext_len) const;
  std::unique_ptr<ChunkWorker> make_worker() const override;
  SecretBytes ticket() const override { return stream_->ticket(direction_); }
  BackendChoice backend() const override { return stream_->backend(); }
  // Opening: the chunk that holds plaintext byte `offset`.
  std::uint64_t chunk_holding(std::uint64_t plain_offset) const;

 private:
  // Plaintext and ciphertext bytes chunk `index` starts at.
  std::uint64_t plain_offset(std::uint64_t index) const;
  std::uint64_t cipher_offset(std::uint64_t index) const;

  Direction direction_;
  std::shared_ptr<const SegmentStream> stream_;
};

}  // namespace paes
