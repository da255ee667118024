#include <algorithm>
#include <cstring>
#include <string>

#include "paes/error.hpp"
#include "paes/plan.hpp"

namespace paes {

bool is_parallel(Mode mode, Direction direction) {
  switch (mode) {
    case Mode::ecb:
    case Mode::ctr:
      return true;
    case Mode::cbc:
    case Mode::cfb128:
    case Mode::cfb8:
    case Mode::cfb1:
      return direction == Direction::decrypt;
    case Mode::ofb:
      return false;
  }
  return false;
}

Block add_to_counter(const Block& counter, std::uint64_t blocks) {
  Block sum = counter;
  unsigned carry = 0;
  for (std::size_t i = kBlockLen; i-- > 0;) {
    const unsigned addend = i >= kBlockLen - 8 ? static_cast<unsigned>((blocks >> (8 * (kBlockLen - 1 - i))) & 0xff) : 0;
    const unsigned total = sum[i] + addend + carry;
    sum[i] = static_cast<std::uint8_t>(total);
    carry = total >> 8;
  }
  return sum;
}

std::uint64_t ChunkPlan::default_chunk_len(Mode mode) {
  switch (mode) {
    case Mode::cfb8: return kDefaultChunkLen / 16;
    case Mode::cfb1: return kDefaultChunkLen / 64;
    default: return kDefaultChunkLen;
  }
}

ChunkPlan::ChunkPlan(const CipherSpec& spec, std::uint64_t input_len, std::uint64_t chunk_len)
    : mode_(spec.mode),
      direction_(spec.direction),
      iv_(spec.iv),
      padded_(spec.padded()),
      input_len_(input_len),
      chunk_len_(chunk_len == kAutoChunkLen ? default_chunk_len(spec.mode)
                                            : chunk_len / kBlockLen * kBlockLen),
      lookback_len_(0),
      parallel_(is_parallel(spec.mode, spec.direction)) {
  if (chunk_len != kAutoChunkLen && (chunk_len < kBlockLen || chunk_len > kMaxChunkLen)) {
    throw usage_error("chunk size must be between 16 bytes and 1G, got " +
                      std::to_string(chunk_len));
  }

  if (mode_is_padded(mode_) && input_len % kBlockLen != 0) {
    if (direction_ == Direction::decrypt) {
      throw Error("ciphertext length " + std::to_string(input_len) +
                  " is not a multiple of 16: not " + std::string(mode_name(mode_)) +
                  " ciphertext, or truncated");
    }
    if (!padded_) {
      throw Error("input length " + std::to_string(input_len) +
                  " is not a multiple of 16, which --no-pad requires for " +
                  std::string(mode_name(mode_)));
    }
  }
  if (padded_ && direction_ == Direction::decrypt && input_len == 0) {
    throw Error("bad decrypt: empty input holds no padding block (wrong key or corrupted data)");
  }

  if (parallel_ && direction_ == Direction::decrypt && mode_ != Mode::ecb && mode_ != Mode::ctr) {
    lookback_len_ = kBlockLen;
  }
  if (parallel_) {
    chunk_count_ = input_len == 0 ? 1 : (input_len + chunk_len_ - 1) / chunk_len_;
  } else {
    chunk_count_ = 1;
  }
}

std::uint64_t ChunkPlan::piece_len() const {
  return parallel_ ? chunk_len_ : std::max(chunk_len_, kDefaultChunkLen);
}

Chunk ChunkPlan::chunk(std::uint64_t index) const {
  Chunk c;
  c.index = index;
  c.last = index + 1 == chunk_count_;
  if (parallel_) {
    c.in_offset = index * chunk_len_;
    c.in_len = c.last ? input_len_ - c.in_offset : chunk_len_;
  } else {
    c.in_len = input_len_;
  }
  c.out_offset = c.in_offset;
  return c;
}

std::uint64_t ChunkPlan::max_output_len() const {
  if (padded_ && direction_ == Direction::encrypt) {
    return input_len_ / kBlockLen * kBlockLen + kBlockLen;
  }
  return input_len_;
}

Block ChunkPlan::start_state(const Chunk& c, const std::uint8_t* preceding) const {
  if (mode_ == Mode::ctr) return add_to_counter(iv_, c.in_offset / kBlockLen);
  if (lookback_len_ != 0 && c.in_offset != 0) {
    Block state;
    std::memcpy(state.data(), preceding, kBlockLen);
    return state;
  }
  return iv_;
}

}  // namespace paes
