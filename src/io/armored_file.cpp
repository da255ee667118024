#include "io/armored_file.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>

#include "paes/error.hpp"
#include "util/armor.hpp"
#include "util/base64_lines.hpp"

namespace paes {
namespace {

std::string_view as_text(std::span<const std::uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace

std::unique_ptr<std::uint8_t[]> ArmorPieces::take() {
  {
    std::lock_guard lock(mutex_);
    if (!spare_.empty()) {
      auto buffer = std::move(spare_.back());
      spare_.pop_back();
      return buffer;
    }
  }
  return std::make_unique_for_overwrite<std::uint8_t[]>(kTextLen);
}

void ArmorPieces::give(std::unique_ptr<std::uint8_t[]> buffer) noexcept {
  std::lock_guard lock(mutex_);
  // The vector has room for every buffer ever taken once it held them all;
  // until then a failed push drops the buffer, which is only memory.
  try {
    spare_.push_back(std::move(buffer));
  } catch (...) {
  }
}

ArmoredSink::ArmoredSink(Sink& text, Armor armor)
    : text_(text), armor_(armor), begin_len_(armor_begin_line(armor).size()) {}

std::uint64_t ArmoredSink::text_at(std::uint64_t group) const { return begin_len_ + armor_group_at(group); }

void ArmoredSink::write_at(std::uint64_t offset, std::span<const std::uint8_t> src) {
  if (src.empty()) return;
  const std::uint64_t end = offset + src.size();
  std::uint64_t seen = end_.load(std::memory_order_relaxed);
  while (seen < end && !end_.compare_exchange_weak(seen, end, std::memory_order_relaxed)) {
  }
  written_.fetch_add(src.size(), std::memory_order_relaxed);
  const std::uint64_t first = (offset + 2) / 3;  // the first group whole in this write
  const std::uint64_t last = end / 3;            // and one past the last
  if (first >= last) return hold(offset, src);
  const auto head = static_cast<std::size_t>(3 * first - offset);
  const auto tail = static_cast<std::size_t>(3 * last - offset);
  hold(offset, src.first(head));
  hold(3 * last, src.subspan(tail));
  encode_groups(first, last, src.data() + head);
}

// Bytes of groups that other writes share: kept until their group is whole.
void ArmoredSink::hold(std::uint64_t offset, std::span<const std::uint8_t> bytes) {
  if (bytes.empty()) return;
  std::vector<std::pair<std::uint64_t, HeldGroup>> whole;
  {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      const std::uint64_t at = offset + i;
      const auto it = held_.try_emplace(at / 3).first;
      it->second.bytes[at % 3] = bytes[i];
      it->second.seen |= 1u << (at % 3);
      if (it->second.seen == 7) {
        whole.emplace_back(*it);
        held_.erase(it);
      }
    }
  }
  for (const auto& [group, held] : whole) {
    std::uint8_t chars[5];
    encode_base64_groups(chars, held.bytes, 1);
    const bool line_ends = group % kArmorGroupsPerLine == kArmorGroupsPerLine - 1;
    chars[4] = '\n';
    text_.write_at(text_at(group), {chars, line_ends ? 5u : 4u});
  }
}

// The text of groups [first, end), with the '\n' of each line they end, is
// one run of the text: written piece by piece, whole lines through the fast
// codec, the parts of lines at either end a group at a time.
void ArmoredSink::encode_groups(std::uint64_t first, std::uint64_t end, const std::uint8_t* bytes) {
  ArmorPieces::Lease piece(pieces_);
  std::uint8_t* const text = piece.data();
  std::uint64_t group = first;
  while (group < end) {
    const std::uint64_t piece_at = text_at(group);
    std::size_t len = 0;
    while (group < end && len + kBase64LineLen <= ArmorPieces::kTextLen) {
      if (group % kArmorGroupsPerLine == 0 && end - group >= kArmorGroupsPerLine) {
        const std::size_t lines = static_cast<std::size_t>(std::min<std::uint64_t>(
            (end - group) / kArmorGroupsPerLine, (ArmorPieces::kTextLen - len) / kBase64LineLen));
        encode_base64_lines(text + len, bytes, lines);
        len += lines * kBase64LineLen;
        bytes += lines * kBase64LineBytes;
        group += lines * kArmorGroupsPerLine;
        continue;
      }
      const std::uint64_t line_end = (group / kArmorGroupsPerLine + 1) * kArmorGroupsPerLine;
      const auto groups = static_cast<std::size_t>(std::min(end, line_end) - group);
      encode_base64_groups(text + len, bytes, groups);
      len += 4 * groups;
      bytes += 3 * groups;
      group += groups;
      if (group == line_end) text[len++] = '\n';
    }
    text_.write_at(piece_at, {text, len});
  }
}

void ArmoredSink::finish() {
  const std::uint64_t total = end_.load();
  if (written_.load() != total) throw Error("internal: armor's text was given " + std::to_string(written_.load()) +
                                            " bytes of " + std::to_string(total));
  // The text after the last whole group: a padded group where the bytes end
  // inside one, the last line's '\n' where they end inside a line, the END line.
  std::string tail;
  const std::uint64_t whole_groups = total / 3;
  const auto rest = static_cast<std::size_t>(total % 3);
  {
    std::lock_guard lock(mutex_);
    const auto last = held_.find(whole_groups);
    if (rest != 0 && (last == held_.end() || last->second.seen != (1u << rest) - 1)) {
      throw Error("internal: armor's last bytes were not all given");
    }
    if (held_.size() != (rest != 0 ? 1u : 0u)) throw Error("internal: armor's text has a gap");
    if (rest != 0) {
      std::uint8_t chars[4];
      encode_base64_block(chars, {last->second.bytes, rest});
      tail.append(reinterpret_cast<const char*>(chars), sizeof chars);
      held_.clear();
    }
  }
  if (total % kBase64LineBytes != 0) tail += '\n';
  tail += armor_end_line(armor_);
  text_.write_at(text_at(whole_groups), {reinterpret_cast<const std::uint8_t*>(tail.data()), tail.size()});
  const std::string_view begin = armor_begin_line(armor_);
  text_.write_at(0, {reinterpret_cast<const std::uint8_t*>(begin.data()), begin.size()});
}

std::unique_ptr<ArmoredSource> ArmoredSource::open(Source& text, std::string name) {
  const std::uint64_t size = text.size();
  // The start: whitespace, then the BEGIN line, whose end ('\n' or "\r\n")
  // every line must have.
  std::array<std::uint8_t, kArmorProbeLen> start{};
  const auto probe = std::span(start).first(static_cast<std::size_t>(std::min<std::uint64_t>(size, start.size())));
  text.read_at(0, probe);
  std::size_t skip = 0;
  while (skip < probe.size() && skip < kMaxArmorLeadingWhitespace && is_armor_whitespace(probe[skip])) ++skip;
  const std::string_view opening = as_text(probe.subspan(skip));
  std::string_view begin_line;
  std::string_view end_line;
  if (opening.starts_with(kArmorBegin)) {
    begin_line = kArmorBegin;
    end_line = kArmorEnd;
  } else if (opening.starts_with(kAgeArmorBegin)) {
    begin_line = kAgeArmorBegin;
    end_line = kAgeArmorEnd;
  } else {
    return nullptr;
  }
  const std::string_view after_begin = opening.substr(begin_line.size());
  const Base64LineEnd ending = after_begin.starts_with("\r\n") ? Base64LineEnd::crlf : Base64LineEnd::lf;
  const std::string_view eol = ending == Base64LineEnd::crlf ? "\r\n" : "\n";
  if (!after_begin.starts_with(eol)) return nullptr;
  const std::uint64_t line_len = base64_line_len(ending);
  const std::uint64_t body_at = skip + begin_line.size() + eol.size();

  // The end: the END line, then nothing but whitespace, as ArmorDecoder
  // takes it: a '\r' and the end, or a '\n' and any whitespace. The
  // whitespace is read back in pieces, however long it is.
  std::array<std::uint8_t, 4096> window{};
  std::uint64_t content_end = size;  // one past the last byte that is not whitespace
  for (;;) {
    if (content_end <= body_at) return nullptr;
    const auto len = static_cast<std::size_t>(std::min<std::uint64_t>(window.size(), content_end - body_at));
    text.read_at(content_end - len, std::span(window).first(len));
    std::size_t keep = len;
    while (keep > 0 && is_armor_whitespace(window[keep - 1])) --keep;
    content_end -= len - keep;
    if (keep != 0) break;
  }
  // The last line and the end of the line before it, the END line, and what follows it.
  if (content_end < body_at + 1 + eol.size() + end_line.size()) return nullptr;  // no line of base64
  const std::uint64_t end_at = content_end - end_line.size();
  const std::uint64_t from = std::max(body_at, end_at - std::min(end_at, line_len + 1));
  const std::uint64_t to = std::min(size, content_end + 2);
  std::array<std::uint8_t, kBase64LineLen + 2 + kArmorEnd.size() + 2> tail_bytes{};
  static_assert(kAgeArmorEnd.size() <= kArmorEnd.size());
  const auto tail = std::span(tail_bytes).first(static_cast<std::size_t>(to - from));
  text.read_at(from, tail);
  const auto at = [&](std::uint64_t offset) { return tail[static_cast<std::size_t>(offset - from)]; };
  if (as_text(tail.subspan(static_cast<std::size_t>(end_at - from), end_line.size())) != end_line) return nullptr;
  if (content_end < size) {
    const std::uint8_t next = at(content_end);
    if (next != '\n' && (next != '\r' || (content_end + 1 < size && at(content_end + 1) != '\n'))) return nullptr;
  }
  // The last base64 line ends as the BEGIN line does, and every line
  // before it starts a whole line's length after the one before.
  const std::uint64_t last_end = end_at - eol.size();
  if (as_text(tail.subspan(static_cast<std::size_t>(last_end - from), eol.size())) != eol) return nullptr;
  std::uint64_t last_at = last_end;
  while (last_at > from && at(last_at - 1) != '\n') --last_at;
  if (last_at == from && from != body_at) return nullptr;  // longer than a line
  if ((last_at - body_at) % line_len != 0) return nullptr;

  std::unique_ptr<ArmoredSource> source(new ArmoredSource(text, std::move(name)));
  const std::string_view last(reinterpret_cast<const char*>(&tail[static_cast<std::size_t>(last_at - from)]),
                              static_cast<std::size_t>(last_end - last_at));
  if (decode_base64_line(source->last_, last, source->last_len_) != Base64LineFault::none) return nullptr;
  source->body_at_ = body_at;
  source->ending_ = ending;
  source->whole_lines_ = (last_at - body_at) / line_len;
  return source;
}

void ArmoredSource::read_at(std::uint64_t offset, std::span<std::uint8_t> dst) {
  if (offset > size() || dst.size() > size() - offset) {
    throw Error("internal: reading past the end of " + name_ + "'s armored bytes");
  }
  std::uint8_t* out = dst.data();
  std::uint64_t at = offset;
  const std::uint64_t end = offset + dst.size();
  const std::uint64_t lines_end = std::min(end, whole_lines_ * kBase64LineBytes);
  while (at < lines_end) {
    const std::uint64_t line = at / kBase64LineBytes;
    const std::uint64_t line_start = line * kBase64LineBytes;
    if (at != line_start || lines_end - at < kBase64LineBytes) {  // a part of a line
      std::uint8_t bytes[kBase64LineBytes];
      decode_lines(bytes, line, 1);
      const auto n = static_cast<std::size_t>(std::min(lines_end, line_start + kBase64LineBytes) - at);
      std::memcpy(out, bytes + (at - line_start), n);
      out += n;
      at += n;
      continue;
    }
    const auto lines =
        static_cast<std::size_t>(std::min<std::uint64_t>((lines_end - at) / kBase64LineBytes, ArmorPieces::kLines));
    decode_lines(out, line, lines);
    out += lines * kBase64LineBytes;
    at += lines * kBase64LineBytes;
  }
  if (at < end) {
    const auto from_last = static_cast<std::size_t>(at - whole_lines_ * kBase64LineBytes);
    std::memcpy(out, last_ + from_last, static_cast<std::size_t>(end - at));
  }
}

void ArmoredSource::decode_lines(std::uint8_t* out, std::uint64_t first, std::size_t lines) {
  ArmorPieces::Lease piece(pieces_);
  std::uint8_t* const text = piece.data();
  const std::size_t line_len = base64_line_len(ending_);
  text_.read_at(body_at_ + first * line_len, {text, lines * line_len});
  const std::size_t decoded = decode_base64_lines(out, text, lines, ending_);
  if (decoded != lines) fail(first + decoded, text + decoded * line_len);
}

// ArmorDecoder's words, where it can tell from the line alone.
void ArmoredSource::fail(std::uint64_t line, const std::uint8_t* text) const {
  // The BEGIN line is line 1.
  const std::string where = name_ + ": bad armor: line " + std::to_string(line + 2);
  if (std::memchr(text, '\n', kBase64LineChars) != nullptr) {
    throw Error(where + " is shorter than 64 columns, where only the last base64 line may be");
  }
  const std::string_view eol = ending_ == Base64LineEnd::crlf ? "\r\n" : "\n";
  if (as_text({text + kBase64LineChars, eol.size()}) != eol) {
    throw Error(where + (ending_ == Base64LineEnd::crlf ? " does not end as the lines before it"
                                                        : " is longer than 64 columns"));
  }
  throw Error(where + " is not base64");
}

}  // namespace paes
