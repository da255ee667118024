#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "paes/error.hpp"
#include "paes/io.hpp"
#include "util/armor.hpp"

namespace paes {

OffsetSource::OffsetSource(Source& inner, std::uint64_t offset) : Offset(inner, offset) {
  if (offset > inner.size()) throw Error("internal: body offset beyond the end of the input");
}

namespace {

// A pipe holds 64 KiB by default, so a 1 MiB chunk took 16 reads (or writes),
// each a wake-up of the process at the other end. Grown to a chunk, one call
// moves what the peer wrote meanwhile. /proc/sys/fs/pipe-max-size (1 MiB by
// default) bounds it for users other than root; where the kernel refuses
// (that limit, or a user's pipe-user-pages-soft quota) the pipe keeps its size.
void grow_pipe(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) return;
  constexpr int kPipeBytes = 1 << 20;
  if (::fcntl(fd, F_GETPIPE_SZ) < kPipeBytes) (void)::fcntl(fd, F_SETPIPE_SZ, kPipeBytes);
}

}  // namespace

StreamReader::StreamReader(int fd, std::string name) : fd_(fd), name_(std::move(name)) {
  grow_pipe(fd_);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) throw system_error("reading " + name_);
}

StreamReader::StreamReader(int fd, std::string name, std::uint64_t len) : StreamReader(fd, std::move(name)) {
  file_left_ = len;
}

StreamReader::StreamReader(int fd, std::string name, Armor armor) : StreamReader(fd, std::move(name)) {
  armor_ = armor;
}

StreamReader::StreamReader(int fd, std::string name, std::uint64_t len, Armor armor)
    : StreamReader(fd, std::move(name), len) {
  armor_ = armor;
}

StreamReader::StreamReader(Source& source, std::string name, std::uint64_t offset)
    : name_(std::move(name)), source_(&source), source_at_(offset) {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) throw system_error("reading " + name_);
}

StreamReader::~StreamReader() { ::close(wake_fd_); }

void StreamReader::interrupt() {
  const std::uint64_t one = 1;
  // Cannot fail short of a full counter, which would still wake the reader.
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);
}

std::size_t StreamReader::read_full(std::uint8_t* dst, std::size_t len) {
  if (armor_ == Armor::none) return read_raw(dst, len);
  if (!looked_) look_for_armor();
  if (decoder_) return read_decoded(dst, len);
  // Unarmored: the start read to look for armor, then the rest as it comes.
  const std::size_t held = std::min(len, pending_.size() - pending_at_);
  if (held != 0) std::memcpy(dst, pending_.data() + pending_at_, held);  // data() may be null
  pending_at_ += held;
  return held + read_raw(dst + held, len - held);
}

// Armor::paes is decoded only where the input starts with its BEGIN line:
// other input (a binary sealed file) is read as it is.
void StreamReader::look_for_armor() {
  looked_ = true;
  if (armor_ == Armor::paes) {
    pending_.resize(kArmorProbeLen);
    pending_.resize(read_raw(pending_.data(), pending_.size()));
    if (!starts_with_armor(pending_)) return;
    text_ = std::move(pending_);
    pending_.clear();
  }
  decoder_ = std::make_unique<ArmorDecoder>(armor_, name_);
  decoder_->decode(text_, pending_);
  text_.clear();
}

std::size_t StreamReader::read_decoded(std::uint8_t* dst, std::size_t len) {
  constexpr std::size_t kTextPiece = std::size_t{1} << 20;
  std::size_t done = 0;
  while (done < len) {
    if (pending_at_ == pending_.size()) {
      if (text_ended_) break;
      pending_.clear();
      pending_at_ = 0;
      text_.resize(kTextPiece);
      text_.resize(read_raw(text_.data(), text_.size()));
      if (text_.empty()) {
        text_ended_ = true;
        decoder_->finish(pending_);
      } else {
        decoder_->decode(text_, pending_);
      }
      continue;
    }
    const std::size_t take = std::min(len - done, pending_.size() - pending_at_);
    std::memcpy(dst + done, pending_.data() + pending_at_, take);
    pending_at_ += take;
    done += take;
  }
  return done;
}

std::size_t StreamReader::read_raw(std::uint8_t* dst, std::size_t len) {
  if (source_) {  // a file: its reads never wait, so nothing to interrupt
    const std::uint64_t size = source_->size();
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(len, size - std::min(size, source_at_)));
    source_->read_at(source_at_, {dst, n});
    source_at_ += n;
    return n;
  }
  if (file_left_) len = static_cast<std::size_t>(std::min<std::uint64_t>(len, *file_left_));
  std::size_t done = 0;
  while (done < len) {
    // A pipe or a terminal: wait for input or for interrupt(), whichever
    // comes first. A file never keeps a read waiting, so it needs no poll.
    if (!file_left_) {
      pollfd ready[2] = {{fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
      if (::poll(ready, 2, -1) < 0) {
        if (errno == EINTR) continue;
        throw system_error("reading " + name_);
      }
      if (ready[1].revents != 0) throw Error("reading " + name_ + ": stopped after an error");
    }
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

StreamWriter::StreamWriter(int fd, std::string name) : fd_(fd), name_(std::move(name)) { grow_pipe(fd_); }

StreamWriter::StreamWriter(int fd, std::string name, Armor armor) : StreamWriter(fd, std::move(name)) {
  if (armor != Armor::none) encoder_ = std::make_unique<ArmorEncoder>(armor);
}

StreamWriter::StreamWriter(Sink& sink, std::string name, std::uint64_t offset)
    : name_(std::move(name)), sink_(&sink), sink_at_(offset) {}

StreamWriter::~StreamWriter() = default;

void StreamWriter::write_text_only() {
  text_only_ = true;
  holding_ = true;
}

void StreamWriter::check_text(std::span<const std::uint8_t> src) {
  for (const std::uint8_t byte : src) {
    const bool c0 = (byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r') || byte == 0x7f;
    const bool c1 = last_byte_ == 0xc2 && byte >= 0x80 && byte <= 0x9f;  // U+0080..U+009F in UTF-8
    last_byte_ = byte;
    if (c0 || c1) {
      throw usage_error("refusing to write binary output to a terminal (" + name_ + "): this plaintext is not text",
                        Remedy::output_file);
    }
  }
}

void StreamWriter::write_all(std::span<const std::uint8_t> src) {
  if (text_only_) {
    check_text(src);
    if (holding_) {
      held_.insert(held_.end(), src.begin(), src.end());
      if (held_.size() < kTextHold) return;
      holding_ = false;
      write_raw(held_);
      held_.clear();
      return;
    }
  }
  if (!encoder_) return write_raw(src);
  text_.clear();
  encoder_->encode(src, text_);
  write_raw(text_);
}

void StreamWriter::finish() {
  if (holding_) {
    holding_ = false;
    write_raw(held_);
    held_.clear();
  }
  if (!encoder_) return;
  text_.clear();
  encoder_->finish(text_);
  write_raw(text_);
}

void StreamWriter::write_raw(std::span<const std::uint8_t> src) {
  if (sink_) {
    sink_->write_at(sink_at_, src);
    sink_at_ += src.size();
    return;
  }
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
