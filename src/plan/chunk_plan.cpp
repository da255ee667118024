#include <algorithm>
#include <cstring>
#include <string>

#include "cipher/backend.hpp"
#include "cipher/padding.hpp"
#include "job/ticket.hpp"
#include "paes/error.hpp"
#include "paes/plan.hpp"

namespace paes {
namespace {

// Runs the plan's chunks through one RawCipher of the plan's backend. For a
// sequential plan the chunks are pieces of one cipher stream and arrive in
// order on this worker, so the cipher is started once, at the first piece.
class RawWorker final : public ChunkWorker {
 public:
  RawWorker(const ChunkPlan& plan, const CipherBackend& backend)
      : plan_(plan), spec_(plan.spec()), cipher_(backend.make_raw(spec_)) {}

  std::size_t transform(const Chunk& chunk, std::uint8_t* out, const std::uint8_t* in) override {
    if (plan_.parallel() || chunk.index == 0) {
      // The first chunk starts from the IV and has nothing before it: pointing
      // before the start of its buffer would be undefined behaviour.
      const bool has_preceding = plan_.lookback_len() != 0 && chunk.in_offset != 0;
      const std::uint8_t* preceding = has_preceding ? in - plan_.lookback_len() : nullptr;
      cipher_->begin(plan_.start_state(chunk, preceding));
    }
    return padded_update(*cipher_, spec_.mode, spec_.direction, spec_.padded(), out, in,
                         static_cast<std::size_t>(chunk.in_len), chunk.last);
  }

 private:
  const ChunkPlan& plan_;
  const CipherSpec& spec_;
  std::unique_ptr<RawCipher> cipher_;
};

}  // namespace

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

std::uint64_t ChunkPlan::default_chunk_len(Mode mode) {
  switch (mode) {
    case Mode::cfb8: return kDefaultChunkLen / 16;
    case Mode::cfb1: return kDefaultChunkLen / 64;
    default: return kDefaultChunkLen;
  }
}

std::uint64_t ChunkPlan::fitted_chunk_len(Mode mode, std::uint64_t input_len, unsigned workers) {
  const std::uint64_t nominal = default_chunk_len(mode);
  if (workers <= 1) return nominal;
  const std::uint64_t chunks = std::uint64_t{workers} * kChunksPerWorker;
  const std::uint64_t share = (input_len / chunks + kBlockLen - 1) / kBlockLen * kBlockLen;
  return std::clamp(share, nominal / 4, nominal);
}

std::uint64_t ChunkPlan::decide_chunk_len(Mode mode, std::uint64_t requested, std::uint64_t backend_preference,
                                          std::optional<std::uint64_t> input_len, unsigned workers) {
  if (requested != kAutoChunkLen) {
    if (requested < kBlockLen || requested > kMaxChunkLen) {
      throw usage_error("chunk size must be between 16 bytes and 1G, got " + std::to_string(requested));
    }
    return requested / kBlockLen * kBlockLen;
  }
  if (backend_preference != 0) return std::max<std::uint64_t>(kBlockLen, backend_preference / kBlockLen * kBlockLen);
  // Fitted to the workers the input pays for: a job one worker runs takes
  // whole chunks, not a quarter of them for workers it won't have.
  if (input_len && workers != 0) return fitted_chunk_len(mode, *input_len, workers);
  return default_chunk_len(mode);
}

ChunkPlan::ChunkPlan(const CipherSpec& spec, std::uint64_t chunk_len, const BackendChoice& backend)
    : ChunkPlan(spec, chunk_len, raw_backend(backend, spec.mode, spec.direction)) {}

ChunkPlan::ChunkPlan(const CipherSpec& spec, std::uint64_t chunk_len, const CipherBackend& backend)
    : spec_{spec.mode, spec.direction, spec.key.clone(), spec.iv, spec.padding},
      backend_(&backend),
      chunk_len_(decide_chunk_len(spec.mode, chunk_len, backend.preferred_chunk_len())),
      lookback_len_(0),
      parallel_(is_parallel(spec.mode, spec.direction)) {
  piece_len_ = parallel_ ? chunk_len_ : std::max(chunk_len_, kDefaultChunkLen);
  if (parallel_ && spec.direction == Direction::decrypt && spec.mode != Mode::ecb &&
      spec.mode != Mode::ctr) {
    lookback_len_ = kBlockLen;
  }
}

std::uint64_t ChunkPlan::chunk_count(std::uint64_t input_len) const {
  check_message_length(spec_.mode, spec_.direction, spec_.padded(), input_len);
  // An empty message is still one (empty) chunk: padding may fill it.
  return std::max<std::uint64_t>(1, (input_len + piece_len_ - 1) / piece_len_);
}

Chunk ChunkPlan::chunk(std::uint64_t index, std::uint64_t in_len, bool last) const {
  return Chunk{index, in_offset(index), in_len, in_offset(index), last};
}

std::size_t ChunkPlan::out_capacity(const Chunk& c) const {
  const bool grows = c.last && spec_.padded() && spec_.direction == Direction::encrypt;
  return static_cast<std::size_t>(c.in_len) + (grows ? kBlockLen : 0);
}

std::uint64_t ChunkPlan::max_output_len(std::uint64_t input_len) const {
  if (spec_.padded() && spec_.direction == Direction::encrypt) {
    return input_len / kBlockLen * kBlockLen + kBlockLen;
  }
  return input_len;
}

Block ChunkPlan::start_state(const Chunk& c, const std::uint8_t* preceding) const {
  if (spec_.mode == Mode::ctr) return add_to_counter(spec_.iv, c.in_offset / kBlockLen);
  if (lookback_len_ != 0 && c.in_offset != 0) {
    Block state;
    std::memcpy(state.data(), preceding, kBlockLen);
    return state;
  }
  return spec_.iv;
}

std::unique_ptr<ChunkWorker> ChunkPlan::make_worker() const {
  return std::make_unique<RawWorker>(*this, *backend_);
}

BackendChoice ChunkPlan::backend() const { return {std::string(backend_->name()), backend_->device_index()}; }

void* ChunkPlan::allocate_chunk_memory(std::size_t bytes) const { return backend_->allocate_chunk_memory(bytes); }

void ChunkPlan::free_chunk_memory(void* data, std::size_t bytes) const noexcept {
  backend_->free_chunk_memory(data, bytes);
}

SecretBytes ChunkPlan::ticket() const {
  TicketWriter w;
  w.start(TicketKind::raw, backend());
  w.u8(static_cast<std::uint8_t>(spec_.mode));
  w.u8(static_cast<std::uint8_t>(spec_.direction));
  w.u8(spec_.padding ? 1 : 0);
  w.u64(chunk_len_);
  w.u8(spec_.key.size());
  w.raw(spec_.key.data(), spec_.key.size());
  w.raw(spec_.iv.data(), kBlockLen);
  return w.finish();
}

}  // namespace paes
