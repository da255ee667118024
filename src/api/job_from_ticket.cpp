// Rebuilding owning jobs from tickets in another MPI rank. Each job kind
// writes its own ticket beside its class (ChunkPlan::ticket in plan/,
// SegmentJob::ticket in format/); reading them back needs both kinds, so it
// lives here, above both, and job/ keeps only the encoding they share.
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <utility>

#include "format/sealed_format.hpp"
#include "job/ticket.hpp"
#include "paes/error.hpp"
#include "paes/job.hpp"
#include "paes/plan.hpp"

namespace paes {
namespace {

// A job that owns what the job it wraps refers to (a spec, a segment key).
template <class Owned>
class OwningJob final : public Job {
 public:
  OwningJob(std::unique_ptr<Owned> owned, std::unique_ptr<Job> job)
      : owned_(std::move(owned)), job_(std::move(job)) {}
  bool parallel() const override { return job_->parallel(); }
  std::size_t lookback_len() const override { return job_->lookback_len(); }
  std::uint64_t in_offset(std::uint64_t i) const override { return job_->in_offset(i); }
  std::uint64_t nominal_in_len(std::uint64_t i) const override { return job_->nominal_in_len(i); }
  Chunk chunk(std::uint64_t i, std::uint64_t len, bool last) const override { return job_->chunk(i, len, last); }
  std::size_t out_capacity(const Chunk& c) const override { return job_->out_capacity(c); }
  std::uint64_t chunk_count(std::uint64_t len) const override { return job_->chunk_count(len); }
  std::unique_ptr<ChunkWorker> make_worker() const override { return job_->make_worker(); }
  void* allocate_chunk_memory(std::size_t bytes) const override { return job_->allocate_chunk_memory(bytes); }
  void free_chunk_memory(void* data, std::size_t bytes) const noexcept override {
    job_->free_chunk_memory(data, bytes);
  }
  SecretBytes ticket() const override { return job_->ticket(); }
  std::string_view backend_name() const override { return job_->backend_name(); }

 private:
  std::unique_ptr<Owned> owned_;  // declared first: destroyed after the job that refers to it
  std::unique_ptr<Job> job_;
};

// An enum's byte, checked: a value past the enum would index tables (the
// cipher's name by mode) out of bounds.
Mode mode_from_byte(std::uint8_t byte) {
  if (byte >= std::size(kAllModes)) throw Error("malformed job ticket: mode " + std::to_string(byte));
  return kAllModes[byte];
}

Direction direction_from_byte(std::uint8_t byte) {
  if (byte > static_cast<std::uint8_t>(Direction::decrypt)) {
    throw Error("malformed job ticket: direction " + std::to_string(byte));
  }
  return static_cast<Direction>(byte);
}

}  // namespace

std::unique_ptr<Job> job_from_ticket(const SecretBytes& ticket) {
  TicketReader r(ticket);
  const auto kind = static_cast<TicketKind>(r.u8());
  if (kind == TicketKind::raw) {
    auto spec = std::make_unique<CipherSpec>();
    spec->mode = mode_from_byte(r.u8());
    spec->direction = direction_from_byte(r.u8());
    spec->padding = r.u8() != 0;
    const std::uint64_t chunk_len = r.u64();
    const std::size_t key_len = r.u8();
    spec->key = SecretBytes(r.take(key_len), key_len);
    std::memcpy(spec->iv.data(), r.take(kBlockLen), kBlockLen);
    auto plan = std::make_unique<ChunkPlan>(*spec, chunk_len);
    return std::make_unique<OwningJob<CipherSpec>>(std::move(spec), std::move(plan));
  }
  if (kind == TicketKind::segments) {
    const Direction direction = direction_from_byte(r.u8());
    const auto segment_len = static_cast<std::uint32_t>(r.u64());
    const std::size_t key_len = r.u8();
    auto key = std::make_unique<SecretBytes>(r.take(key_len), key_len);
    NoncePrefix prefix;
    std::memcpy(prefix.data(), r.take(kNoncePrefixLen), kNoncePrefixLen);
    auto job = std::make_unique<SegmentJob>(direction, key_len, segment_len, *key, prefix);
    return std::make_unique<OwningJob<SecretBytes>>(std::move(key), std::move(job));
  }
  throw Error("internal: unknown job ticket kind");
}

}  // namespace paes
