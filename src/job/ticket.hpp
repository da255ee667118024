// The byte layout of job tickets (Job::ticket(), job_from_ticket()): a kind
// byte, the job's backend (TicketWriter::backend), then the fields each job
// needs, integers big-endian. Only paes processes of the same build exchange
// them (MPI ranks of one run).
#pragma once

#include <cstdint>
#include <string>

#include "paes/backend_choice.hpp"
#include "paes/error.hpp"
#include "paes/secret.hpp"

namespace paes {

enum class TicketKind : std::uint8_t { raw = 1, segments = 2, age_chunks = 3 };

// Tickets hold keys, so the writer grows its buffer in secure memory: each
// buffer it outgrows is wiped as it is released, never freed as it was.
class TicketWriter {
 public:
  void u8(std::uint64_t v) {
    const auto byte = static_cast<std::uint8_t>(v);
    raw(&byte, 1);
  }
  void u64(std::uint64_t v) {
    for (int shift = 56; shift >= 0; shift -= 8) u8(v >> shift);
  }
  void raw(const std::uint8_t* data, std::size_t len);
  // A ticket's start: its kind, and the backend its job runs on.
  void start(TicketKind kind, const BackendChoice& backend) {
    u8(static_cast<std::uint8_t>(kind));
    u64(backend.name.size());
    raw(reinterpret_cast<const std::uint8_t*>(backend.name.data()), backend.name.size());
    u64(backend.device ? std::uint64_t{*backend.device} + 1 : 0);
  }
  // The bytes written so far, exactly.
  SecretBytes finish() const { return SecretBytes(buffer_.data(), len_); }

 private:
  SecretBytes buffer_;
  std::size_t len_ = 0;
};

class TicketReader {
 public:
  explicit TicketReader(const SecretBytes& ticket) : ticket_(ticket) {}
  std::uint8_t u8() { return *take(1); }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | u8();
    return v;
  }
  // What TicketWriter::start wrote.
  TicketKind kind() { return static_cast<TicketKind>(u8()); }
  BackendChoice backend() {
    BackendChoice backend;
    const auto len = static_cast<std::size_t>(u64());
    backend.name.assign(reinterpret_cast<const char*>(take(len)), len);
    if (const std::uint64_t device = u64(); device != 0) backend.device = static_cast<unsigned>(device - 1);
    return backend;
  }
  const std::uint8_t* take(std::size_t len) {
    if (len > ticket_.size() - pos_) throw Error("internal: malformed job ticket");
    pos_ += len;
    return ticket_.data() + pos_ - len;
  }

 private:
  const SecretBytes& ticket_;
  std::size_t pos_ = 0;
};

}  // namespace paes
