#include "format/stanza_header.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <functional>

#include "cipher/kdf.hpp"
#include "paes/error.hpp"
#include "util/base64.hpp"

namespace paes {
namespace {

constexpr std::size_t kBodyColumns = 64;
constexpr std::string_view kMacKeyInfo = "header";
constexpr std::string_view kRawKeyMacKeyInfo = "paes v3 raw key header";

bool is_vchar_string(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

// Lines of a header, each without its LF; a header that ends before a line's
// LF is cut short.
class LineCursor {
 public:
  LineCursor(std::span<const std::uint8_t> bytes, const std::string& name)
      : text_(reinterpret_cast<const char*>(bytes.data()), std::min(bytes.size(), kMaxHeaderLen)),
        too_long_(bytes.size() > kMaxHeaderLen), name_(name) {}

  std::string_view next() {
    const std::size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) {
      if (too_long_) throw malformed("longer than " + std::to_string(kMaxHeaderLen >> 20) + " MiB");
      throw Error(name_ + ": truncated header (it ends before its MAC line)");
    }
    const std::string_view line = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return line;
  }
  std::size_t pos() const { return pos_; }
  std::string_view consumed_from(std::size_t start) const { return text_.substr(start, pos_ - start); }
  Error malformed(const std::string& why) const { return Error(name_ + ": malformed header (" + why + ")"); }

 private:
  std::string_view text_;
  bool too_long_;
  std::size_t pos_ = 0;
  const std::string& name_;
};

// "a b c" split at single spaces; an empty part (two spaces, a space at
// either end) is refused by the caller's VCHAR check.
std::vector<std::string_view> split_spaces(std::string_view line) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t space = line.find(' ', start);
    parts.push_back(line.substr(start, space == std::string_view::npos ? std::string_view::npos : space - start));
    if (space == std::string_view::npos) return parts;
    start = space + 1;
  }
}

SecretBytes labelled_key(const SecretBytes& ikm, std::string_view label) {
  const auto* info = reinterpret_cast<const std::uint8_t*>(label.data());
  return hkdf_sha256(ikm, {}, {info, label.size()}, kHeaderMacLen);
}

}  // namespace

Stanza read_stanza(std::string_view first_line, const std::function<std::string_view()>& next_line,
                   const std::function<Error(const std::string&)>& malformed) {
  const std::vector<std::string_view> parts = split_spaces(first_line);
  if (parts.size() < 2 || parts[0] != kStanzaLinePrefix) throw malformed("a stanza without a type");
  Stanza stanza;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (!is_vchar_string(parts[i])) throw malformed("a stanza argument that is empty or not printable ASCII");
    if (i == 1) {
      stanza.type = parts[i];
    } else {
      stanza.args.emplace_back(parts[i]);
    }
  }
  while (true) {
    const std::string_view line = next_line();
    if (line.size() > kBodyColumns) throw malformed("a stanza body line longer than 64 columns");
    const auto bytes = decode_base64(line);
    if (!bytes) throw malformed("a stanza body that is not canonical unpadded base64");
    stanza.body.insert(stanza.body.end(), bytes->begin(), bytes->end());
    if (line.size() < kBodyColumns) return stanza;  // the final line is the short one
  }
}

HeaderMacKey HeaderMacKey::of_file_key(const SecretBytes& file_key) {
  return HeaderMacKey(labelled_key(file_key, kMacKeyInfo));
}

HeaderMacKey HeaderMacKey::of_raw_key(const SecretBytes& raw_key) {
  return HeaderMacKey(labelled_key(raw_key, kRawKeyMacKeyInfo));
}

std::optional<std::size_t> end_of_mac_line(std::span<const std::uint8_t> bytes) {
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  for (std::size_t line_start = 0; line_start < text.size();) {
    const std::size_t end = text.find('\n', line_start);
    if (end == std::string_view::npos) break;
    if (text.substr(line_start).starts_with(kMacLinePrefix)) return end + 1;
    line_start = end + 1;
  }
  return std::nullopt;
}

std::string encode_stanza(const Stanza& stanza) {
  if (!is_vchar_string(stanza.type)) throw Error("internal: a stanza type is printable ASCII without spaces");
  std::string out = std::string(kStanzaLinePrefix) + " " + stanza.type;
  for (const std::string& arg : stanza.args) {
    if (!is_vchar_string(arg)) throw Error("internal: a stanza argument is printable ASCII without spaces");
    out += ' ';
    out += arg;
  }
  out += '\n';
  const std::string body = encode_base64(stanza.body);
  for (std::size_t at = 0;; at += kBodyColumns) {
    const std::string_view line = std::string_view(body).substr(std::min(at, body.size()), kBodyColumns);
    out += line;
    out += '\n';
    if (line.size() < kBodyColumns) return out;
  }
}

StanzaHeader parse_stanza_header(std::span<const std::uint8_t> bytes, const std::string& name) {
  LineCursor lines(bytes, name);
  StanzaHeader header;
  while (true) {
    const std::size_t line_start = lines.pos();
    const std::string_view line = lines.next();
    if (line.starts_with(kMacLinePrefix)) {
      // "--- " and the MAC: the MAC covers the header through "---".
      header.mac_input = std::string(lines.consumed_from(0).substr(0, line_start + kMacLinePrefix.size()));
      const std::vector<std::string_view> parts = split_spaces(line);
      if (parts.size() != 2 || parts[0] != kMacLinePrefix) throw lines.malformed("a MAC line that is not \"--- MAC\"");
      const auto mac = decode_base64(parts[1]);
      if (!mac || mac->size() != kHeaderMacLen) throw lines.malformed("a MAC that is not 32 bytes of canonical base64");
      std::copy(mac->begin(), mac->end(), header.mac.begin());
      header.length = lines.pos();
      return header;
    }
    if (!line.starts_with(std::string(kStanzaLinePrefix) + " ")) {
      throw lines.malformed("a line that is neither a stanza (\"-> \") nor the MAC line (\"--- \")");
    }
    if (header.stanzas.size() == kMaxStanzas) throw lines.malformed("more than " + std::to_string(kMaxStanzas) + " stanzas");
    header.stanzas.push_back(read_stanza(
        line, [&] { return lines.next(); }, [&](const std::string& why) { return lines.malformed(why); }));
  }
}

std::string encode_stanza_header(std::span<const std::uint8_t> prefix, const std::vector<Stanza>& stanzas,
                                 const HeaderMacKey& mac_key, std::span<const std::uint8_t> associated_data) {
  std::string text;
  for (const Stanza& stanza : stanzas) text += encode_stanza(stanza);
  text += kMacLinePrefix;
  const HeaderMac mac = header_mac(mac_key, prefix, text, associated_data);
  text += ' ';
  text += encode_base64(mac);
  text += '\n';
  return text;
}

HeaderMac header_mac(const HeaderMacKey& mac_key, std::span<const std::uint8_t> prefix, std::string_view mac_input,
                     std::span<const std::uint8_t> associated_data) {
  std::vector<std::uint8_t> message(prefix.begin(), prefix.end());
  message.insert(message.end(), mac_input.begin(), mac_input.end());
  message.insert(message.end(), associated_data.begin(), associated_data.end());
  return hmac_sha256(mac_key.bytes().view(), message);
}

bool header_mac_matches(const HeaderMacKey& mac_key, std::span<const std::uint8_t> prefix, const StanzaHeader& header,
                        std::span<const std::uint8_t> associated_data) {
  const HeaderMac expected = header_mac(mac_key, prefix, header.mac_input, associated_data);
  return CRYPTO_memcmp(expected.data(), header.mac.data(), kHeaderMacLen) == 0;
}

}  // namespace paes
