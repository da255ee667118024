// Rebuilding jobs from tickets in another MPI rank. Each job kind
// writes its own ticket beside its class (ChunkPlan::ticket in plan/,
// SegmentJob::ticket in format/); reading them back needs both kinds, so it
// lives here, above both, and job/ keeps only the encoding they share.
#include <cstring>
#include <iterator>
#include <memory>
#include <string>

#include "format/age_format.hpp"
#include "format/sealed_format.hpp"
#include "job/ticket.hpp"
#include "paes/error.hpp"
#include "paes/job.hpp"
#include "paes/plan.hpp"

namespace paes {
namespace {

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

BackendChoice ticket_backend(const SecretBytes& ticket) {
  TicketReader r(ticket);
  r.kind();
  return r.backend();
}

std::unique_ptr<Job> job_from_ticket(const SecretBytes& ticket) { return job_from_ticket(ticket, ticket_backend(ticket)); }

std::unique_ptr<Job> job_from_ticket(const SecretBytes& ticket, const BackendChoice& backend) {
  TicketReader r(ticket);
  const TicketKind kind = r.kind();
  r.backend();  // the caller's `backend` runs it
  if (kind == TicketKind::raw) {
    CipherSpec spec;
    spec.mode = mode_from_byte(r.u8());
    spec.direction = direction_from_byte(r.u8());
    spec.padding = r.u8() != 0;
    const std::uint64_t chunk_len = r.u64();
    const std::size_t key_len = r.u8();
    spec.key = SecretBytes(r.take(key_len), key_len);
    std::memcpy(spec.iv.data(), r.take(kBlockLen), kBlockLen);
    return std::make_unique<ChunkPlan>(spec, chunk_len, backend);
  }
  if (kind == TicketKind::segments) {
    const Direction direction = direction_from_byte(r.u8());
    const auto segment_len = static_cast<std::uint32_t>(r.u64());
    const std::size_t key_len = r.u8();
    const SecretBytes key(r.take(key_len), key_len);
    NoncePrefix prefix;
    std::memcpy(prefix.data(), r.take(kNoncePrefixLen), kNoncePrefixLen);
    return std::make_unique<SegmentJob>(direction, key_len, segment_len, key, prefix, backend);
  }
  if (kind == TicketKind::age_chunks) {  // ChaCha20 runs on the CPU whatever `backend` says
    const Direction direction = direction_from_byte(r.u8());
    const SecretBytes payload_key(r.take(kAgePayloadKeyLen), kAgePayloadKeyLen);
    return std::make_unique<SegmentJob>(direction, std::make_shared<AgeChunks>(payload_key));
  }
  throw Error("internal: unknown job ticket kind");
}

}  // namespace paes
