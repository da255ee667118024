#include "util/armor.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cstring>

#include "paes/error.hpp"
#include "util/base64_lines.hpp"

namespace paes {
namespace {

// EVP's calls take an int length: pieces of whole lines, well below it.
constexpr std::size_t kPiece = kBase64LineBytes << 16;

EVP_ENCODE_CTX* new_context() {
  EVP_ENCODE_CTX* ctx = EVP_ENCODE_CTX_new();
  if (!ctx) throw Error("out of memory for a base64 context");
  return ctx;
}

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

std::string_view armor_begin_line(Armor armor) {
  switch (armor) {
    case Armor::paes:
      return kArmorBeginLine;
    case Armor::age:
      return kAgeArmorBeginLine;
    case Armor::none:
    case Armor::openssl:
      break;
  }
  return {};
}

std::string_view armor_end_line(Armor armor) {
  switch (armor) {
    case Armor::paes:
      return kArmorEndLine;
    case Armor::age:
      return kAgeArmorEndLine;
    case Armor::none:
    case Armor::openssl:
      break;
  }
  return {};
}

ArmorEncoder::ArmorEncoder(Armor armor) : armor_(armor) {}

ArmorEncoder::~ArmorEncoder() = default;

void ArmorEncoder::begin(std::vector<std::uint8_t>& text) {
  if (begun_) return;
  begun_ = true;
  const std::string_view line = armor_begin_line(armor_);
  text.insert(text.end(), line.begin(), line.end());
}

void ArmorEncoder::encode(std::span<const std::uint8_t> bytes, std::vector<std::uint8_t>& text) {
  begin(text);
  if (held_len_ != 0) {
    const std::size_t take = std::min(bytes.size(), kBase64LineBytes - held_len_);
    if (take != 0) std::memcpy(held_ + held_len_, bytes.data(), take);
    held_len_ += take;
    bytes = bytes.subspan(take);
    if (held_len_ < kBase64LineBytes) return;
    const std::size_t at = text.size();
    text.resize(at + kBase64LineLen);
    encode_base64_lines(text.data() + at, held_, 1);
    held_len_ = 0;
  }
  const std::size_t lines = bytes.size() / kBase64LineBytes;
  const std::size_t at = text.size();
  text.resize(at + lines * kBase64LineLen);
  encode_base64_lines(text.data() + at, bytes.data(), lines);
  const auto rest = bytes.subspan(lines * kBase64LineBytes);
  if (!rest.empty()) std::memcpy(held_, rest.data(), rest.size());
  held_len_ = rest.size();
}

void ArmorEncoder::finish(std::vector<std::uint8_t>& text) {
  begin(text);
  if (held_len_ != 0) {
    const std::size_t at = text.size();
    text.resize(at + kBase64LineLen);
    const std::size_t n = encode_base64_block(text.data() + at, {held_, held_len_});
    text[at + n] = '\n';
    text.resize(at + n + 1);
    held_len_ = 0;
  }
  const std::string_view line = armor_end_line(armor_);
  text.insert(text.end(), line.begin(), line.end());
}

ArmorDecoder::ArmorDecoder(Armor armor, std::string name) : armor_(armor), name_(std::move(name)) {}

ArmorDecoder::~ArmorDecoder() { EVP_ENCODE_CTX_free(ctx_); }

void ArmorDecoder::fail(const std::string& why) const { throw Error(name_ + ": bad armor: " + why); }

void ArmorDecoder::decode(std::span<const std::uint8_t> text, std::vector<std::uint8_t>& bytes) {
  if (armor_ == Armor::openssl) return decode_openssl(text, bytes);
  while (state_ == State::begin && line_.empty() && !text.empty() && is_armor_whitespace(text.front())) {
    if (++leading_whitespace_ > kMaxArmorLeadingWhitespace) {
      fail("more than " + std::to_string(kMaxArmorLeadingWhitespace) + " bytes of whitespace before the BEGIN line");
    }
    text = text.subspan(1);
  }
  while (!text.empty()) {
    if (state_ == State::end) {
      // Whitespace may follow the END line (a text channel adds some); nothing else.
      const bool blank = std::all_of(text.begin(), text.end(), is_armor_whitespace);
      if (!blank) fail("text after the END line");
      return;
    }
    // Whole 64-column lines of the body, many at once: the lines that the
    // reading line by line below would take as full lines.
    if (state_ == State::body && line_.empty()) {
      text = whole_lines(text, bytes);
      if (text.empty()) return;
    }
    const auto* newline = static_cast<const std::uint8_t*>(std::memchr(text.data(), '\n', text.size()));
    const std::size_t upto = newline ? static_cast<std::size_t>(newline - text.data()) : text.size();
    // A line and its '\r', at most: a longer one is no armor's.
    if (line_.size() + upto > kBase64LineChars + 1)
      fail("line " + std::to_string(line_number_ + 1) + " is longer than 64 columns");
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

// The whole lines at the start of `text`, LF or CRLF as its first line ends,
// decoded in steps that grow while the lines are whole: `bytes` is grown
// (and zeroed) for a step before its lines are known to be whole, so a text
// of other lines between whole ones costs a small step, not the piece.
std::span<const std::uint8_t> ArmorDecoder::whole_lines(std::span<const std::uint8_t> text,
                                                        std::vector<std::uint8_t>& bytes) {
  Base64LineEnd end = Base64LineEnd::lf;
  if (text.size() > kBase64LineChars + 1 && text[kBase64LineChars] == '\r' && text[kBase64LineChars + 1] == '\n') {
    end = Base64LineEnd::crlf;
  } else if (text.size() <= kBase64LineChars || text[kBase64LineChars] != '\n') {
    return text;
  }
  const std::size_t line_len = base64_line_len(end);
  std::size_t step = 64;
  while (text.size() >= line_len) {
    const std::size_t lines = std::min(text.size() / line_len, step);
    const std::size_t from = bytes.size();
    bytes.resize(from + lines * kBase64LineBytes);
    const std::size_t decoded = decode_base64_lines(bytes.data() + from, text.data(), lines, end);
    bytes.resize(from + decoded * kBase64LineBytes);
    line_number_ += decoded;
    text = text.subspan(decoded * line_len);
    if (decoded < lines) break;
    step = std::min<std::size_t>(step * 2, 1 << 14);
  }
  return text;
}

// openssl enc -a's lines are taken by the fast codec for as long as they
// are whole 64-column lines; the rest of the text (the last line, or other
// line lengths, whitespace, CRLF) goes to OpenSSL's decoder, which gives
// what openssl enc -d -a gives. Until then it would have held nothing:
// EVP_DecodeUpdate keeps only the characters of a group not yet whole.
void ArmorDecoder::decode_openssl(std::span<const std::uint8_t> text, std::vector<std::uint8_t>& bytes) {
  if (ctx_) return evp_decode(text, bytes);
  const auto to_evp = [&](std::span<const std::uint8_t> rest) {
    ctx_ = new_context();
    EVP_DecodeInit(ctx_);
    evp_decode(rest, bytes);
  };
  if (!line_.empty()) {  // a line begun in the last piece
    const std::size_t take = std::min(text.size(), kBase64LineLen - line_.size());
    line_.append(reinterpret_cast<const char*>(text.data()), take);
    text = text.subspan(take);
    if (line_.size() < kBase64LineLen) return;
    const std::string line = std::move(line_);
    line_.clear();
    const std::span<const std::uint8_t> whole(reinterpret_cast<const std::uint8_t*>(line.data()), line.size());
    if (!whole_lines(whole, bytes).empty()) {
      to_evp(whole);
      return evp_decode(text, bytes);
    }
  }
  const auto rest = whole_lines(text, bytes);
  if (rest.size() >= kBase64LineLen) return to_evp(rest);
  line_.assign(reinterpret_cast<const char*>(rest.data()), rest.size());
}

void ArmorDecoder::evp_decode(std::span<const std::uint8_t> text, std::vector<std::uint8_t>& bytes) {
  while (!text.empty()) {
    const auto piece = text.first(std::min(text.size(), kPiece));
    const std::size_t from = bytes.size();
    // At most 3 bytes for each 4 characters, with the 3 held from before.
    bytes.resize(from + piece.size() + kBase64LineBytes);
    int written = 0;
    if (EVP_DecodeUpdate(ctx_, bytes.data() + from, &written, piece.data(), static_cast<int>(piece.size())) < 0) {
      fail("not base64 text");
    }
    bytes.resize(from + static_cast<std::size_t>(written));
    text = text.subspan(piece.size());
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
  if (line.size() > kBase64LineChars) fail(where() + " is longer than 64 columns");
  std::uint8_t decoded[kBase64LineBytes];
  std::size_t len = 0;
  switch (decode_base64_line(decoded, line, len)) {
    case Base64LineFault::none:
      break;
    case Base64LineFault::not_groups:
      fail(where() + " is not whole base64 groups of 4 characters");
    case Base64LineFault::not_base64:
      fail(where() + " is not base64");
    case Base64LineFault::not_canonical:
      // A padded group's unused bits set: the line would not be the one
      // encoding of its bytes, and could be changed to give the same.
      fail(where() + " is not canonical base64");
  }
  bytes.insert(bytes.end(), decoded, decoded + len);
  if (line.size() < kBase64LineChars || line.back() == '=') state_ = State::last_line_seen;
}

void ArmorDecoder::finish(std::vector<std::uint8_t>& bytes) {
  if (armor_ == Armor::openssl) {
    if (!ctx_) {  // whole lines so far, and a last one (or nothing) held
      const std::string line = std::move(line_);
      line_.clear();
      ctx_ = new_context();
      EVP_DecodeInit(ctx_);
      evp_decode({reinterpret_cast<const std::uint8_t*>(line.data()), line.size()}, bytes);
    }
    const std::size_t from = bytes.size();
    bytes.resize(from + kBase64LineBytes);
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
