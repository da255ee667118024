// The byte layout of job tickets (Job::ticket(), job_from_ticket()): a kind
// byte, then the fields each job needs, integers big-endian. Only paes
// processes of the same build exchange them (MPI ranks of one run).
#pragma once

#include <cstdint>

#include "paes/error.hpp"
#include "paes/secret.hpp"

namespace paes {

enum class TicketKind : std::uint8_t { raw = 1, segments = 2 };

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
