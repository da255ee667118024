#include "engine/feed.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

namespace paes {

void ChunkBuffer::reserve(const Job& job, std::size_t bytes) {
  if (bytes <= size_) return;
  auto* grown = static_cast<std::uint8_t*>(job.allocate_chunk_memory(bytes));
  if (grown == nullptr) {
    // Not zeroed: every byte a slot uses is read or written first, and a
    // stream's slots are reserved for a whole chunk before its length is
    // known, so zeroing touched 1 MiB of pages for a 2 KiB stream.
    auto heap = std::make_unique_for_overwrite<std::uint8_t[]>(bytes);
    if (size_ != 0) std::memcpy(heap.get(), data_, size_);
    release();
    heap_ = std::move(heap);
    data_ = heap_.get();
    size_ = bytes;
    return;
  }
  if (size_ != 0) std::memcpy(grown, data_, size_);
  release();
  job_ = &job;
  data_ = grown;
  size_ = bytes;
}

void ChunkBuffer::release() noexcept {
  if (job_ != nullptr) job_->free_chunk_memory(data_, size_);
  job_ = nullptr;
  heap_.reset();
  data_ = nullptr;
  size_ = 0;
}

void Slot::prepare(const Job& job, const Chunk& c) {
  lookback = job.lookback_len();
  chunk = c;
  produced = 0;
  buffer.reserve(job, lookback + std::max<std::size_t>(c.in_len, job.out_capacity(c)));
}

std::size_t slots_within_budget(const Job& job, std::size_t wanted, std::size_t at_least) {
  // Chunk 1 has the nominal length (chunk 0 of a sealed body is shorter).
  const std::uint64_t in_len = job.nominal_in_len(1);
  const std::uint64_t slot_len =
      job.lookback_len() + std::max<std::uint64_t>(in_len, job.out_capacity(job.chunk(1, in_len, false)));
  const std::uint64_t fit = kMaxBytesInFlight / std::max<std::uint64_t>(slot_len, 1);
  return static_cast<std::size_t>(std::max<std::uint64_t>(std::min<std::uint64_t>(wanted, fit), at_least));
}

unsigned workers_within_bytes(unsigned threads, std::uint64_t chunks, std::uint64_t bytes) {
  const std::uint64_t most = std::min({std::uint64_t{threads}, chunks, bytes / kMinBytesPerWorker});
  return static_cast<unsigned>(std::max<std::uint64_t>(most, 1));
}

void read_chunk(const Job& job, Source& in, const Chunk& c, Slot& slot) {
  slot.prepare(job, c);
  if (slot.lookback != 0 && c.index != 0) {
    in.read_at(c.in_offset - slot.lookback, {slot.buffer.data(), slot.lookback});
  }
  in.read_at(c.in_offset, {slot.data(), static_cast<std::size_t>(c.in_len)});
}

SourceFeed::SourceFeed(const Job& job, Source& in)
    : job_(job), in_(in), count_(job.chunk_count(in.size())) {}

bool SourceFeed::next(Slot& slot) {
  if (index_ == count_) return false;
  read_chunk(job_, in_, chunk_of(job_, in_.size(), count_, index_++), slot);
  return true;
}

bool StreamFeed::next(Slot& slot) {
  if (done_) return false;
  const std::size_t nominal = static_cast<std::size_t>(job_.nominal_in_len(index_));
  const std::size_t lookback = job_.lookback_len();
  slot.buffer.reserve(job_, lookback + nominal);
  std::uint8_t* dst = slot.buffer.data() + lookback;
  std::size_t got = 0;
  if (carried_ >= 0 && nominal != 0) {
    dst[got++] = static_cast<std::uint8_t>(carried_);
    carried_ = -1;
  }
  got += in_.read_full(dst + got, nominal - got);
  bool last = got < nominal;
  if (!last) {
    std::uint8_t ahead = 0;
    if (in_.read_full(&ahead, 1) == 1) {
      carried_ = ahead;
    } else {
      last = true;
    }
  }
  total_ += got;
  if (last) {
    job_.chunk_count(total_);  // throws if the stream's length is impossible
    done_ = true;
  }
  const Chunk c = job_.chunk(index_, got, last);
  slot.prepare(job_, c);
  if (lookback != 0) {
    if (index_ != 0) std::memcpy(slot.buffer.data(), tail_.data(), lookback);
    // Keep this chunk's last bytes for the next one. Chunks of a job with a
    // lookback are whole blocks, so every chunk but the last holds enough.
    if (!last) tail_.assign(slot.data() + got - lookback, slot.data() + got);
  }
  ++index_;
  return true;
}

void SinkDrain::put(Slot& slot) { out_.write_at(slot.chunk.out_offset, {slot.data(), slot.produced}); }

void StreamDrain::put(Slot& slot) { out_.write_all({slot.data(), slot.produced}); }

}  // namespace paes
