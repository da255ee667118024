#include <unistd.h>

#include <cerrno>

#include "paes/error.hpp"
#include "paes/io.hpp"

namespace paes {

OffsetSource::OffsetSource(Source& inner, std::uint64_t offset) : inner_(inner), offset_(offset) {
  if (offset > inner.size()) throw Error("internal: body offset beyond the end of the input");
}

std::size_t StreamReader::read_full(std::uint8_t* dst, std::size_t len) {
  std::size_t done = 0;
  while (done < len) {
    const ssize_t n = ::read(fd_, dst + done, len - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw system_error("reading " + name_);
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
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
