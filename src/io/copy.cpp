#include <unistd.h>

#include <cerrno>
#include <memory>

#include "paes/error.hpp"
#include "paes/io.hpp"

namespace paes {
namespace {

// copy_file_range can't serve this pair of files: the caller copies by hand.
bool copy_unsupported(int err) {
  return err == EXDEV || err == EINVAL || err == ENOSYS || err == EOPNOTSUPP || err == EBADF;
}

}  // namespace

void copy_file_bytes(InputFile& in, std::uint64_t in_offset, int out_fd, std::uint64_t out_offset, std::uint64_t len) {
  auto in_off = static_cast<off64_t>(in_offset);
  auto out_off = static_cast<off64_t>(out_offset);
  std::uint64_t left = len;
  while (left > 0) {
    const ssize_t n = ::copy_file_range(in.fd(), &in_off, out_fd, &out_off, left, 0);
    if (n > 0) {
      left -= static_cast<std::uint64_t>(n);
      continue;
    }
    if (n == 0) throw Error(in.path() + ": ended before its last " + std::to_string(left) + " bytes (it shrank)");
    if (errno == EINTR) continue;
    if (!copy_unsupported(errno)) throw system_error("copying " + in.path());
    break;
  }
  constexpr std::size_t kBufferLen = std::size_t{1} << 20;
  const auto buffer = std::make_unique_for_overwrite<std::uint8_t[]>(kBufferLen);
  while (left > 0) {
    const std::size_t n = left < kBufferLen ? static_cast<std::size_t>(left) : kBufferLen;
    in.read_at(static_cast<std::uint64_t>(in_off), {buffer.get(), n});
    for (std::size_t done = 0; done < n;) {
      const ssize_t wrote = ::pwrite(out_fd, buffer.get() + done, n - done, out_off + static_cast<off64_t>(done));
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) throw system_error("writing the copy of " + in.path());
      done += static_cast<std::size_t>(wrote);
    }
    in_off += static_cast<off64_t>(n);
    out_off += static_cast<off64_t>(n);
    left -= n;
  }
}

}  // namespace paes
