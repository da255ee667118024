#include "engine/chunk_runner.hpp"

#include <algorithm>

namespace paes {

std::uint64_t piece_count(const ChunkPlan& plan, const Chunk& chunk) {
  // An empty message still has one (empty) final piece: padding may fill it.
  return std::max<std::uint64_t>(1, (chunk.in_len + plan.piece_len() - 1) / plan.piece_len());
}

Piece piece(const ChunkPlan& plan, const Chunk& chunk, std::uint64_t index) {
  Piece p;
  const std::uint64_t start = index * plan.piece_len();
  p.offset = chunk.in_offset + start;
  p.len = static_cast<std::size_t>(std::min(plan.piece_len(), chunk.in_len - start));
  p.final = chunk.last && index + 1 == piece_count(plan, chunk);
  return p;
}

std::uint64_t run_chunk(const ChunkPlan& plan, const Chunk& chunk, ChunkCipher& cipher,
                        Source& in, Sink& out, std::vector<std::uint8_t>& scratch) {
  Block preceding{};
  if (plan.lookback_len() != 0 && chunk.in_offset != 0) {
    in.read_at(chunk.in_offset - plan.lookback_len(), preceding);
  }
  cipher.begin(plan.start_state(chunk, preceding.data()));

  std::uint64_t out_offset = chunk.out_offset;
  const std::uint64_t pieces = piece_count(plan, chunk);
  for (std::uint64_t i = 0; i < pieces; ++i) {
    const Piece p = piece(plan, chunk, i);
    // Only the final piece may grow (by the padding block of an encryption).
    const auto out_max = static_cast<std::size_t>(p.final ? plan.max_output_len() - out_offset : p.len);
    const std::uint8_t* src = in.view(p.offset, p.len);
    std::uint8_t* dst = out.view(out_offset, out_max);
    if (!src || !dst) {
      scratch.resize(std::max({scratch.size(), p.len, out_max}));
      if (!src) {
        in.read_at(p.offset, {scratch.data(), p.len});
        src = scratch.data();
      }
    }
    // Transform in place in the scratch buffer when the sink is a file.
    std::uint8_t* target = dst ? dst : scratch.data();
    const std::size_t produced = cipher.update(target, src, p.len, p.final);
    if (!dst) out.write_at(out_offset, {target, produced});
    out_offset += produced;
  }
  return out_offset - chunk.out_offset;
}

void FirstError::capture() noexcept {
  std::lock_guard lock(mutex_);
  if (!error_) error_ = std::current_exception();
}

bool FirstError::failed() const noexcept {
  std::lock_guard lock(mutex_);
  return error_ != nullptr;
}

void FirstError::rethrow() const {
  std::lock_guard lock(mutex_);
  if (error_) std::rethrow_exception(error_);
}

}  // namespace paes
