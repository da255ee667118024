// The ticket writer's buffer (job/ticket.hpp).
#include "job/ticket.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace paes {

void TicketWriter::raw(const std::uint8_t* data, std::size_t len) {
  if (len == 0) return;
  if (len > buffer_.size() - len_) {
    SecretBytes bigger(std::max<std::size_t>(64, 2 * (len_ + len)));
    if (len_ != 0) std::memcpy(bigger.data(), buffer_.data(), len_);
    buffer_ = std::move(bigger);  // the old buffer is wiped as it goes
  }
  std::memcpy(buffer_.data() + len_, data, len);
  len_ += len;
}

}  // namespace paes
