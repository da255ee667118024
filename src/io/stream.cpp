#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "paes/error.hpp"
#include "paes/io.hpp"

namespace paes {

OffsetSource::OffsetSource(Source& inner, std::uint64_t offset) : inner_(inner), offset_(offset) {
  if (offset > inner.size()) throw Error("internal: body offset beyond the end of the input");
}

std::size_t StreamReader::read_full(std::uint8_t* dst, std::size_t len) {
  if (file_left_) len = static_cast<std::size_t>(std::min<std::uint64_t>(len, *file_left_));
  std::size_t done = 0;
  while (done < len) {
    const ssize_t n = ::read(fd_, dst + done, len - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw system_error("reading " + name_);
    }
    if (n == 0) {
      if (file_left_) throw Error("reading " + name_ + ": file shrank while being read");
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (file_left_) *file_left_ -= done;
  return done;
}

void StreamWriter::write_all(std::span<const std::uint8_t> src) {
  std::size_t done = 0;
  while (done < src.size()) {
    const ssize_t n = ::write(fd_, src.data() + done, src.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw system_error("writing " + name_);
    }
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace paes
