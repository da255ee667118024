#include "util/armor.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cstring>

#include "paes/error.hpp"

namespace paes {
namespace {

constexpr std::size_t kColumns = 64;
constexpr std::size_t kLineBytes = kColumns / 4 * 3;  // 48
// EVP's calls take an int length: pieces of whole lines, well below it.
constexpr std::size_t kPiece = kLineBytes << 16;

EVP_ENCODE_CTX* new_context() {
  EVP_ENCODE_CTX* ctx = EVP_ENCODE_CTX_new();
  if (!ctx) throw Error("out of memory for a base64 context");
  return ctx;
}

void append(std::vector<std::uint8_t>& text, std::string_view line) {
  text.insert(text.end(), line.begin(), line.end());
  text.push_back('\n');
}

bool is_armor_whitespace(std::uint8_t c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

bool starts_with_armor(std::span<const std::uint8_t> start) {
  std::size_t skip = 0;
  while (skip < start.size() && skip < kMaxArmorLeadingWhitespace && is_armor_whitespace(start[skip])) ++skip;
  start = start.subspan(skip);
  for (const std::string_view begin : {kArmorBegin, kAgeArmorBegin}) {
    const std::size_t n = begin.size();
    if (start.size() <= n || std::memcmp(start.data(), begin.data(), n) != 0) continue;
    return start[n] == '\n' || (start[n] == '\r' && start.size() > n + 1 && start[n + 1] == '\n');
  }
  return false;
}

ArmorEncoder::ArmorEncoder(Armor armor) : armor_(armor), ctx_(new_context()) { EVP_EncodeInit(ctx_); }

ArmorEncoder::~ArmorEncoder() { EVP_ENCODE_CTX_free(ctx_); }

void ArmorEncoder::begin(std::vector<std::uint8_t>& text) {
  if (begun_) return;
  begun_ = true;
  if (armor_ == Armor::paes) append(text, kArmorBegin);
  if (armor_ == Armor::age) append(text, kAgeArmorBegin);
}

void ArmorEncoder::encode(std::span<const std::uint8_t> bytes, std::vector<std::uint8_t>& text) {
  begin(text);
  while (!bytes.empty()) {
    const auto piece = bytes.first(std::min(bytes.size(), kPiece));
    const std::size_t at = text.size();
    // Whole lines of the piece and of the bytes held from before (fewer
    // than a line), 65 bytes each, and the NUL EVP writes after them.
    text.resize(at + (piece.size() / kLineBytes + 2) * (kColumns + 1));
    int written = 0;
    if (EVP_EncodeUpdate(ctx_, text.data() + at, &written, piece.data(), static_cast<int>(piece.size())) != 1) {
      throw Error("base64 encoding failed");
    }
    text.resize(at + static_cast<std::size_t>(written));
    bytes = bytes.subspan(piece.size());
  }
}

void ArmorEncoder::finish(std::vector<std::uint8_t>& text) {
  begin(text);
  const std::size_t at = text.size();
  text.resize(at + kColumns + 2);
  int written = 0;
  EVP_EncodeFinal(ctx_, text.data() + at, &written);
  text.resize(at + static_cast<std::size_t>(written));
  if (armor_ == Armor::paes) append(text, kArmorEnd);
  if (armor_ == Armor::age) append(text, kAgeArmorEnd);
}

ArmorDecoder::ArmorDecoder(Armor armor, std::string name) : armor_(armor), name_(std::move(name)) {
  if (armor_ == Armor::openssl) {
    ctx_ = new_context();
    EVP_DecodeInit(ctx_);
  }
}

ArmorDecoder::~ArmorDecoder() { EVP_ENCODE_CTX_free(ctx_); }

void ArmorDecoder::fail(const std::string& why) const { throw Error(name_ + ": bad armor: " + why); }

void ArmorDecoder::decode(std::span<const std::uint8_t> text, std::vector<std::uint8_t>& bytes) {
  if (armor_ == Armor::openssl) {
    while (!text.empty()) {
      const auto piece = text.first(std::min(text.size(), kPiece));
      const std::size_t from = bytes.size();
      // At most 3 bytes for each 4 characters, with the 3 held from before.
      bytes.resize(from + piece.size() + kLineBytes);
      int written = 0;
      if (EVP_DecodeUpdate(ctx_, bytes.data() + from, &written, piece.data(), static_cast<int>(piece.size())) < 0) {
        fail("not base64 text");
      }
      bytes.resize(from + static_cast<std::size_t>(written));
      text = text.subspan(piece.size());
    }
    return;
  }
  while (state_ == State::begin && line_.empty() && !text.empty() && is_armor_whitespace(text.front())) {
    if (++leading_whitespace_ > kMaxArmorLeadingWhitespace) {
      fail("more than " + std::to_string(kMaxArmorLeadingWhitespace) + " bytes of whitespace before the BEGIN line");
    }
    text = text.subspan(1);
  }
  while (!text.empty()) {
    if (state_ == State::end) {
      // Whitespace may follow the END line (a text channel adds some); nothing else.
      const bool blank = std::all_of(text.begin(), text.end(),
                                     [](std::uint8_t c) { return c == '\n' || c == '\r' || c == ' ' || c == '\t'; });
      if (!blank) fail("text after the END line");
      return;
    }
    const auto* newline = static_cast<const std::uint8_t*>(std::memchr(text.data(), '\n', text.size()));
    const std::size_t upto = newline ? static_cast<std::size_t>(newline - text.data()) : text.size();
    // A line and its '\r', at most: a longer one is no armor's.
    if (line_.size() + upto > kColumns + 1) fail("line " + std::to_string(line_number_ + 1) + " is longer than 64 columns");
    const std::string_view here(reinterpret_cast<const char*>(text.data()), upto);
    if (!newline) {
      line_.append(here);
      return;
    }
    // A line whole in this piece is read where it is; one begun in the last is joined.
    std::string_view line = here;
    if (!line_.empty()) line = line_.append(here);
    if (line.ends_with('\r')) line.remove_suffix(1);
    ++line_number_;
    paes_line(line, bytes);
    line_.clear();
    text = text.subspan(upto + 1);
  }
}

void ArmorDecoder::paes_line(std::string_view line, std::vector<std::uint8_t>& bytes) {
  const auto where = [&] { return "line " + std::to_string(line_number_); };
  if (state_ == State::begin) {
    if (line == kArmorBegin) {
      end_line_ = kArmorEnd;
    } else if (line == kAgeArmorBegin) {
      end_line_ = kAgeArmorEnd;
    } else {
      fail("it doesn't start with the line " + std::string(kArmorBegin) + " (or age's " +
           std::string(kAgeArmorBegin) + ")");
    }
    state_ = State::body;
    return;
  }
  if (line == end_line_) {
    if (line_number_ == 2) fail("no base64 between the BEGIN and END lines");
    state_ = State::end;
    return;
  }
  if (state_ == State::last_line_seen) {
    fail(where() + " follows the last base64 line (one shorter than 64 columns or padded with '='), where the "
                   "END line belongs");
  }
  if (line.size() > kColumns) fail(where() + " is longer than 64 columns");
  if (line.empty() || line.size() % 4 != 0) fail(where() + " is not whole base64 groups of 4 characters");
  // Padding only at the end, at most 2 characters: EVP_DecodeBlock reads
  // '=' anywhere as zero bits.
  const std::size_t first_pad = line.find('=');
  const std::size_t padding = first_pad == std::string_view::npos ? 0 : line.size() - first_pad;
  if (padding > 2 || (padding != 0 && line.find_first_not_of('=', first_pad) != std::string_view::npos)) {
    fail(where() + " is not base64");
  }
  std::uint8_t decoded[kLineBytes];
  const auto* chars = reinterpret_cast<const unsigned char*>(line.data());
  // It skips whitespace at either end: a line with some decodes short.
  const int n = EVP_DecodeBlock(decoded, chars, static_cast<int>(line.size()));
  if (n != static_cast<int>(line.size() / 4 * 3)) fail(where() + " is not base64");
  const std::size_t len = static_cast<std::size_t>(n) - padding;
  if (padding != 0) {
    // Canonical: a padded group's unused bits are zero, so that the line is
    // the one encoding of its bytes and can't be changed to give the same.
    unsigned char again[5];
    EVP_EncodeBlock(again, decoded + (len / 3) * 3, static_cast<int>(len % 3));
    if (std::memcmp(again, chars + line.size() - 4, 4) != 0) fail(where() + " is not canonical base64");
  }
  bytes.insert(bytes.end(), decoded, decoded + len);
  if (line.size() < kColumns || padding != 0) state_ = State::last_line_seen;
}

void ArmorDecoder::finish(std::vector<std::uint8_t>& bytes) {
  if (armor_ == Armor::openssl) {
    const std::size_t from = bytes.size();
    bytes.resize(from + kLineBytes);
    int written = 0;
    if (EVP_DecodeFinal(ctx_, bytes.data() + from, &written) < 0) fail("it ends inside a group of 4 characters");
    bytes.resize(from + static_cast<std::size_t>(written));
    return;
  }
  if (state_ != State::end && !line_.empty()) {  // a last line without its '\n'
    std::string_view line = line_;
    if (line.ends_with('\r')) line.remove_suffix(1);
    ++line_number_;
    paes_line(line, bytes);
    line_.clear();
  }
  if (state_ != State::end) {
    fail("it ends before the line " + std::string(end_line_.empty() ? kArmorEnd : end_line_) + " (truncated)");
  }
}

}  // namespace paes
