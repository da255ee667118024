#include "format/segment_stream.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "cipher/backend.hpp"
#include "format/sealed_format.hpp"
#include "paes/error.hpp"

namespace paes {
namespace {

// Where segment `s` starts, in plaintext and in ciphertext.
std::uint64_t segment_plain_offset(const SegmentStream& stream, std::uint64_t s) {
  return s == 0 ? 0 : stream.first_plain_len() + (s - 1) * stream.plain_len();
}
std::uint64_t segment_cipher_offset(const SegmentStream& stream, std::uint64_t s) {
  return s == 0 ? 0 : stream.first_plain_len() + kTagLen + (s - 1) * (stream.plain_len() + kTagLen);
}

// The segment index is in the nonce: past the stream's last one, a nonce
// would repeat under the same key. Files are refused by their length
// (chunk_count); a stream's length is unknown until its end, so every chunk
// is also refused by its index before any worker sees it (chunk), and the
// worker checks each segment once more instead of wrapping its index.
void check_segment_index(const SegmentStream& stream, std::uint64_t s) {
  if (s >= stream.max_segments()) throw stream.too_many_segments();
}

class SegmentWorker final : public ChunkWorker {
 public:
  SegmentWorker(const SegmentStream& stream, Direction direction)
      : stream_(stream), direction_(direction), codec_(stream.make_codec(direction)) {}

  // The chunk's segments, each at its own index; only the final segment of
  // the last chunk carries the last flag. In place (out == in), a segment's
  // ciphertext and plaintext start at different offsets, and a cipher can't
  // run over a partial overlap: sealing moves each segment's plaintext to
  // its place first, from the last segment back, and opening moves each
  // opened segment down to its place, from the first on, so that neither
  // overwrites bytes still to be read.
  std::size_t transform(const Chunk& c, std::uint8_t* out, const std::uint8_t* in) override {
    const bool sealing = direction_ == Direction::encrypt;
    const std::size_t out_len = cut(c, sealing);
    const Piece& final_piece = pieces_.back();
    if (!sealing && c.last && final_piece.in_len == kTagLen && final_piece.index != 0 &&
        !stream_.empty_final_after_full()) {
      throw Error(std::string("truncated or extended: an empty final ") + stream_.unit() +
                  " after a full one, which no writer of this format makes");
    }
    const bool in_place = out == in;
    if (sealing) {
      for (auto p = pieces_.rbegin(); p != pieces_.rend(); ++p) {
        const bool last = c.last && p == pieces_.rbegin();
        if (in_place && p->out_at != p->in_at) std::memmove(out + p->out_at, in + p->in_at, p->in_len);
        codec_->seal(p->index, last, out + p->out_at, in_place ? out + p->out_at : in + p->in_at, p->in_len);
      }
      return out_len;
    }
    for (const Piece& p : pieces_) {
      const bool last = c.last && &p == &final_piece;
      if (!in_place) {
        codec_->open(p.index, last, out + p.out_at, in + p.in_at, p.in_len);
        continue;
      }
      const std::size_t n = codec_->open(p.index, last, out + p.in_at, out + p.in_at, p.in_len);
      if (p.out_at != p.in_at) std::memmove(out + p.out_at, out + p.in_at, n);
    }
    return out_len;
  }

 private:
  struct Piece {
    std::uint64_t index;  // the segment's, in the stream
    std::size_t in_at, in_len, out_at;
  };
  // The chunk's segments into pieces_; returns the output's length. Never
  // more than segments_per_chunk() pieces, so the output stays within the
  // job's out_capacity: a chunk of one segment is that segment, whatever its
  // length, and a chunk longer than its segments is refused.
  std::size_t cut(const Chunk& c, bool sealing) {
    const auto offset = [&](std::uint64_t s) {
      return sealing ? segment_plain_offset(stream_, s) : segment_cipher_offset(stream_, s);
    };
    const std::uint64_t per_chunk = stream_.segments_per_chunk();
    const std::uint64_t first = c.index * per_chunk;
    const std::uint64_t base = offset(first);
    pieces_.clear();
    std::size_t in_at = 0, out_at = 0;
    for (std::uint64_t s = first;; ++s) {
      check_segment_index(stream_, s);
      const bool last_piece = s + 1 == first + per_chunk;
      const auto end = static_cast<std::size_t>(last_piece ? c.in_len : std::min(offset(s + 1) - base, c.in_len));
      const std::size_t len = end - in_at;
      if (last_piece && per_chunk > 1 && end > offset(s + 1) - base) {
        throw Error(std::string("internal: a chunk longer than its ") + std::to_string(per_chunk) + " " +
                    stream_.unit() + "s");
      }
      pieces_.push_back({s, in_at, len, out_at});
      out_at += sealing ? len + kTagLen : len - std::min(len, kTagLen);
      in_at = end;
      if (in_at == c.in_len) return out_at;
    }
  }

  const SegmentStream& stream_;
  Direction direction_;
  std::unique_ptr<SegmentCodec> codec_;
  std::vector<Piece> pieces_;
};

}  // namespace

TinkSegments::TinkSegments(std::size_t key_len, std::uint32_t segment_len, const SecretBytes& segment_key,
                           const NoncePrefix& prefix, const CipherBackend& backend)
    : segment_len_(segment_len),
      header_len_(StreamHeader::length(key_len)),
      segment_key_(segment_key.clone()),
      prefix_(prefix),
      backend_(&backend) {
  check_sealed_params(key_len, segment_len);
}

Error TinkSegments::too_many_segments() const {
  return Error("too large for the sealed format: more than 2^32 segments at this segment size "
               "(use a larger segment size)");
}

std::unique_ptr<SegmentCodec> TinkSegments::make_codec(Direction direction) const {
  return std::make_unique<TinkSegmentCodec>(*backend_, segment_key_, prefix_, direction);
}

BackendChoice TinkSegments::backend() const { return {std::string(backend_->name()), backend_->device_index()}; }

SecretBytes TinkSegments::ticket(Direction direction) const {
  TicketWriter w;
  w.start(TicketKind::segments, backend());
  w.u8(static_cast<std::uint8_t>(direction));
  w.u64(segment_len_);
  w.u8(segment_key_.size());
  w.raw(segment_key_.data(), segment_key_.size());
  w.raw(prefix_.data(), prefix_.size());
  return w.finish();
}

SegmentJob::SegmentJob(Direction direction, std::shared_ptr<const SegmentStream> stream)
    : direction_(direction), stream_(std::move(stream)) {}

SegmentJob::SegmentJob(Direction direction, std::size_t key_len, std::uint32_t segment_len,
                       const SecretBytes& segment_key, const NoncePrefix& prefix, const CipherBackend& backend)
    : SegmentJob(direction, std::make_shared<TinkSegments>(key_len, segment_len, segment_key, prefix, backend)) {}

SegmentJob::SegmentJob(Direction direction, std::size_t key_len, std::uint32_t segment_len,
                       const SecretBytes& segment_key, const NoncePrefix& prefix, const BackendChoice& backend)
    : SegmentJob(direction, key_len, segment_len, segment_key, prefix, segment_backend(backend)) {}

std::uint64_t SegmentJob::plain_offset(std::uint64_t index) const {
  return segment_plain_offset(*stream_, index * stream_->segments_per_chunk());
}

std::uint64_t SegmentJob::cipher_offset(std::uint64_t index) const {
  return segment_cipher_offset(*stream_, index * stream_->segments_per_chunk());
}

std::uint64_t SegmentJob::chunk_holding(std::uint64_t plain) const {
  const std::uint64_t first = stream_->first_plain_len();
  const std::uint64_t segment = plain < first ? 0 : 1 + (plain - first) / stream_->plain_len();
  return segment / stream_->segments_per_chunk();
}

std::uint64_t SegmentJob::in_offset(std::uint64_t index) const {
  return direction_ == Direction::encrypt ? plain_offset(index) : cipher_offset(index);
}

std::uint64_t SegmentJob::nominal_in_len(std::uint64_t index) const {
  return in_offset(index + 1) - in_offset(index);
}

Chunk SegmentJob::chunk(std::uint64_t index, std::uint64_t in_len, bool last) const {
  check_segment_index(*stream_, index * stream_->segments_per_chunk());
  const std::uint64_t out = direction_ == Direction::encrypt ? cipher_offset(index) : plain_offset(index);
  return Chunk{index, in_offset(index), in_len, out, last};
}

std::size_t SegmentJob::out_capacity(const Chunk& c) const {
  if (direction_ == Direction::decrypt) return static_cast<std::size_t>(c.in_len);
  // A tag for each segment (an empty chunk is one empty segment).
  const std::uint64_t per = stream_->segments_per_chunk();
  return static_cast<std::size_t>(c.in_len + per * kTagLen);
}

std::uint64_t SegmentJob::segment_count(std::uint64_t input_len) const {
  const SegmentStream& s = *stream_;
  std::uint64_t segments = 1;
  if (direction_ == Direction::encrypt) {
    if (input_len > s.first_plain_len()) {
      segments += (input_len - s.first_plain_len() + s.plain_len() - 1) / s.plain_len();
    }
  } else {
    const std::uint64_t first = s.first_plain_len() + kTagLen, rest = s.plain_len() + kTagLen;
    if (input_len > first) segments += (input_len - first + rest - 1) / rest;
    const std::uint64_t final_len = input_len - segment_cipher_offset(s, segments - 1);
    if (final_len < kTagLen) {
      // Cut short, or bytes added after its end: the length alone can't tell.
      throw Error(std::string("truncated or extended: the last ") + s.unit() +
                  " is shorter than its authentication tag");
    }
    if (final_len == kTagLen && segments > 1 && !s.empty_final_after_full()) {
      throw Error(std::string("truncated or extended: an empty final ") + s.unit() +
                  " after a full one, which no writer of this format makes");
    }
  }
  check_segment_index(s, segments - 1);
  return segments;
}

std::uint64_t SegmentJob::chunk_count(std::uint64_t input_len) const {
  const std::uint64_t per = stream_->segments_per_chunk();
  return (segment_count(input_len) + per - 1) / per;
}

std::uint64_t SegmentJob::plaintext_len(std::uint64_t ciphertext_len) const {
  return ciphertext_len - segment_count(ciphertext_len) * kTagLen;
}

std::unique_ptr<ChunkWorker> SegmentJob::make_worker() const {
  return std::make_unique<SegmentWorker>(*stream_, direction_);
}

}  // namespace paes
