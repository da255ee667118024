// Armor's text read and written at offsets, so that an armored file runs on
// the engines' workers as a binary file does, each worker encoding or
// decoding its own chunks' lines. Armor's lines carry 48 bytes each from the
// first byte on (util/armor.hpp), so the place in the text of any byte is
// known without the bytes before it: the engines see a Source or a Sink of
// the bytes, and never the text.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "paes/armor.hpp"
#include "paes/io.hpp"
#include "util/base64_lines.hpp"

namespace paes {

// Buffers for a piece of text, lent to one caller at a time and kept for the
// next: the pieces are a few hundred KiB (they stay in the cache between
// the codec and the read or write), and a new one each time would fault in
// its pages each time.
class ArmorPieces {
 public:
  // Text of whole lines, CRLF ones too.
  static constexpr std::size_t kLines = 4096;
  static constexpr std::size_t kTextLen = kLines * (kBase64LineLen + 1);

  class Lease {
   public:
    explicit Lease(ArmorPieces& pieces) : pieces_(pieces), buffer_(pieces.take()) {}
    ~Lease() { pieces_.give(std::move(buffer_)); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    std::uint8_t* data() { return buffer_.get(); }

   private:
    ArmorPieces& pieces_;
    std::unique_ptr<std::uint8_t[]> buffer_;
  };

 private:
  std::unique_ptr<std::uint8_t[]> take();
  void give(std::unique_ptr<std::uint8_t[]> buffer) noexcept;
  std::mutex mutex_;
  std::vector<std::unique_ptr<std::uint8_t[]>> spare_;  // guarded by mutex_
};

// A Sink of bytes that writes their armor into `text` (the output file), as
// ArmorEncoder would have written it front to back. A write's whole groups of
// 3 bytes are encoded by the writing thread straight to their place in the
// text. The at most 2 bytes at either end of a write that share a group with
// another write's bytes wait here until that write brings the rest of the
// group; whichever completes a group writes its 4 characters. finish()
// writes the BEGIN line, the end of the last line and the END line.
// write_at may be called from several threads at once, on disjoint ranges.
class ArmoredSink final : public Sink {
 public:
  ArmoredSink(Sink& text, Armor armor);
  void write_at(std::uint64_t offset, std::span<const std::uint8_t> src) override;
  // Once every byte was written (those before the last written byte, each
  // once). Throws Error where some never were, or the text's writes fail.
  void finish();

 private:
  struct HeldGroup {
    std::uint8_t bytes[3] = {};
    unsigned seen = 0;  // a bit for each byte given
  };
  void hold(std::uint64_t offset, std::span<const std::uint8_t> bytes);
  void encode_groups(std::uint64_t first, std::uint64_t end, const std::uint8_t* bytes);
  std::uint64_t text_at(std::uint64_t group) const;

  Sink& text_;
  Armor armor_ = Armor::none;
  std::uint64_t begin_len_ = 0;  // the BEGIN line's, before the base64 lines
  ArmorPieces pieces_;
  std::atomic<std::uint64_t> end_{0};      // one past the last byte written
  std::atomic<std::uint64_t> written_{0};  // the bytes written
  std::mutex mutex_;
  std::map<std::uint64_t, HeldGroup> held_;  // guarded by mutex_: group index -> its bytes so far
};

// The bytes of paes' (or age's) armor in a file, read at offsets: the BEGIN
// line, whole lines of 64 characters, a last line of 1 to 64, the END line;
// every line but the END line ending in '\n', or every one in "\r\n". The
// lines a read covers are checked and decoded by the reading thread, and
// every byte's line is checked once the whole input is read; the BEGIN
// line, the last line and the END line when it is opened. So a read fails
// (an Error naming the line) exactly where ArmorDecoder would have refused
// the text. read_at may be called from several threads at once.
class ArmoredSource final : public Source {
 public:
  // The bytes `text` holds where it is such armor; nullptr where it is not
  // (lines of other lengths or mixed ends, a damaged BEGIN, last or END line):
  // ArmorDecoder then reads it in order, and says what is wrong. `name`
  // names the input in errors.
  static std::unique_ptr<ArmoredSource> open(Source& text, std::string name);

  std::uint64_t size() const override { return whole_lines_ * kBase64LineBytes + last_len_; }
  void read_at(std::uint64_t offset, std::span<std::uint8_t> dst) override;

 private:
  ArmoredSource(Source& text, std::string name) : text_(text), name_(std::move(name)) {}
  void decode_lines(std::uint8_t* out, std::uint64_t first, std::size_t lines);
  [[noreturn]] void fail(std::uint64_t line, const std::uint8_t* text) const;

  Source& text_;
  std::string name_;
  std::uint64_t body_at_ = 0;      // where the first base64 line starts in the text
  Base64LineEnd ending_ = Base64LineEnd::lf;
  std::uint64_t whole_lines_ = 0;  // lines of 64 characters before the last line
  std::uint8_t last_[kBase64LineBytes] = {};  // the last line's bytes
  std::size_t last_len_ = 0;
  ArmorPieces pieces_;
};

}  // namespace paes
