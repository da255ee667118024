// inspect_sealed_file: what a file is, from its first bytes and its length.
#include "paes/inspect.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "format/age_format.hpp"
#include "format/salted_header.hpp"
#include "format/scrypt_stanza.hpp"
#include "format/sealed_format.hpp"
#include "format/stanza_header.hpp"
#include "paes/endpoint.hpp"
#include "paes/error.hpp"
#include "util/text.hpp"

namespace paes {
namespace {

// Enough for a preamble, the largest version-3 header parse_stanza_header
// takes and the MAC line after it.
constexpr std::size_t kPrefixLen = kPreambleLen + kMaxHeaderLen + 128;

void mark_truncated(SealedFileInfo& info, const std::string& why) {
  info.truncated = true;
  info.problem = why;
}

// The stanzas of a version-3 or age header that starts at `start` in
// `prefix`: their types into `info`, and where the header ends; none, with
// info.problem saying why, where they don't parse.
std::optional<std::uint64_t> read_stanzas(SealedFileInfo& info, std::span<const std::uint8_t> prefix,
                                          std::uint64_t start, const std::string& name) {
  try {
    const StanzaHeader stanzas = parse_stanza_header(prefix.subspan(start), name);
    for (const Stanza& s : stanzas.stanzas) info.stanza_types.push_back(s.type);
    return start + stanzas.length;
  } catch (const Error& e) {
    // A header cut before its MAC line is a truncated file, as a cut body is.
    info.truncated = !end_of_mac_line(prefix.subspan(start)) && prefix.size() - start <= kMaxHeaderLen;
    info.problem = e.what();
    return std::nullopt;
  }
}

// How a body after the header is laid out: `fixed` bytes (Tink's stream
// header, age's nonce), then chunks, each `tag_len` bytes longer than its
// plaintext. A body shorter than `least` is truncated: it lacks `too_short`.
struct BodyLayout {
  std::uint64_t fixed;
  std::uint64_t least;
  std::uint64_t tag_len;
  const char* too_short;
};

// The header's size, then the body's overhead and plaintext size, or why the
// body is truncated. `count_chunks` counts the chunks of the bytes after
// `fixed`, or throws an Error saying why no writer ends a body so.
template <class CountChunks>
void inspect_body(SealedFileInfo& info, std::uint64_t size, std::uint64_t header, const BodyLayout& layout,
                  const CountChunks& count_chunks, const std::string& name) {
  info.header_size = header;
  if (size < header + layout.least) {
    mark_truncated(info, name + ": truncated: " + layout.too_short);
    return;
  }
  std::uint64_t chunks = 0;
  try {
    chunks = count_chunks(size - header - layout.fixed);
  } catch (const Error& e) {
    mark_truncated(info, name + ": " + e.what());
    return;
  }
  info.overhead = layout.fixed + chunks * layout.tag_len;
  info.plaintext_size = size - header - *info.overhead;
}

// A paes file: the preamble, a version-3 header, then the body's geometry
// as SegmentJob reads it.
void inspect_paes(SealedFileInfo& info, std::span<const std::uint8_t> prefix, std::uint64_t size,
                  const std::string& name) {
  info.format = InspectedFormat::paes;
  if (prefix.size() > 4) info.version = prefix[4];
  Preamble preamble;
  try {
    preamble = Preamble::decode(prefix, name);
  } catch (const Error& e) {
    info.truncated = size < kPreambleLen;
    info.problem = e.what();
    return;
  }
  info.key_bits = preamble.key_len * 8u;
  info.segment_size = preamble.segment_len;
  switch (preamble.key_source) {
    case KeySource::raw_key: info.key_source = InspectedKeySource::raw_key; break;
    case KeySource::scrypt_passphrase:
      info.key_source = InspectedKeySource::passphrase;
      info.scrypt_log2_n = preamble.scrypt.log2_n;
      break;
    case KeySource::recipient_stanzas: info.key_source = InspectedKeySource::recipients; break;
  }
  info.key_committing = preamble.version == kFormatVersion;
  std::uint64_t header = kPreambleLen;
  if (preamble.version == kFormatVersion) {  // a raw key's header is its MAC line alone
    const auto end = read_stanzas(info, prefix, kPreambleLen, name);
    if (!end) return;
    header = *end;
    if (info.stanza_types.size() == 1 && info.stanza_types.front() == kScryptStanzaType) {
      info.key_source = InspectedKeySource::passphrase;
      try {
        const StanzaHeader stanzas = parse_stanza_header(prefix.subspan(kPreambleLen), name);
        info.scrypt_log2_n = parse_scrypt_stanza(stanzas.stanzas.front(), name).log2_n;
      } catch (const Error& e) {
        info.problem = e.what();
        return;
      }
    }
  }
  const std::uint64_t stream_header = StreamHeader::length(preamble.key_len);
  const BodyLayout layout{stream_header, stream_header, kTagLen, "the file ends before its Tink stream header"};
  const SecretBytes no_key;
  const SegmentJob job(Direction::decrypt, preamble.key_len, preamble.segment_len, no_key, NoncePrefix{},
                       BackendChoice{});
  const auto count_chunks = [&](std::uint64_t body) { return job.segment_count(body); };
  inspect_body(info, size, header, layout, count_chunks, name);
}

// An age file's header and STREAM geometry (binary only: an armored file's
// bytes are base64 lines, named but not decoded).
void inspect_age(SealedFileInfo& info, std::span<const std::uint8_t> prefix, std::uint64_t size,
                 const std::string& name) {
  info.format = InspectedFormat::age;
  info.version = 1;
  if (info.armor) return;
  const auto header = read_stanzas(info, prefix, kAgeVersionLine.size(), name);
  if (!header) return;
  const BodyLayout layout{kAgePayloadNonceLen, kAgePayloadNonceLen + kTagLen, kTagLen,
                          "the age payload is shorter than its nonce and one tag"};
  // The payload's geometry as opening reads it (only an empty message ends
  // in an empty chunk); no key is needed for lengths.
  const SegmentJob job(Direction::decrypt, std::make_shared<AgeChunks>(SecretBytes()));
  const auto count_chunks = [&](std::uint64_t encrypted) { return job.segment_count(encrypted); };
  inspect_body(info, size, *header, layout, count_chunks, name);
}

}  // namespace

const char* inspected_format_name(InspectedFormat format) {
  switch (format) {
    case InspectedFormat::paes: return "paes";
    case InspectedFormat::tink: return "tink";
    case InspectedFormat::age: return "age";
    case InspectedFormat::openssl_salted: return "openssl-salted";
    case InspectedFormat::openpgp: return "openpgp";
    case InspectedFormat::unknown: break;
  }
  return "unknown";
}

const char* inspected_key_source_name(InspectedKeySource source) {
  switch (source) {
    case InspectedKeySource::raw_key: return "raw-key";
    case InspectedKeySource::passphrase: return "passphrase";
    case InspectedKeySource::recipients: return "recipients";
    case InspectedKeySource::none: break;
  }
  return "";
}

SealedFileInfo inspect_sealed_file(const std::string& path) {
  // paes' armor is decoded, and what it holds inspected: the sizes are the
  // binary file's.
  InputEndpoint in(path, true, Armor::paes);
  std::vector<std::uint8_t> prefix(
      static_cast<std::size_t>(std::min<std::uint64_t>(kPrefixLen, in.size().value_or(kPrefixLen))));
  std::uint64_t size = 0;
  SealedFileInfo info;
  try {
    prefix.resize(in.read_prefix(prefix));
    size = prefix.size();
    if (const auto file_size = in.size()) {
      size = *file_size;
    } else {
      std::vector<std::uint8_t> rest(std::size_t{1} << 20);
      while (const std::size_t got = in.read_prefix(rest)) size += got;
    }
  } catch (const Error& e) {
    if (!in.armored()) throw;  // a read error, not what the bytes hold
    info.format = InspectedFormat::paes;
    info.armor = true;
    info.problem = e.what();
    return info;
  }

  info.file_size = size;
  const std::string_view text = as_text(prefix);
  const auto look = recognize_foreign_format(prefix);
  const auto seen = [&](ForeignFormat format) { return look && look->format == format; };
  if (size == 0) {
    info.problem = in.name() + ": empty";
  } else if (text.starts_with("PAES")) {
    inspect_paes(info, prefix, size, in.name());
  } else if (seen(ForeignFormat::age) && (look->armored || text.starts_with(kAgeVersionLine))) {
    info.armor = look->armored;
    inspect_age(info, prefix, size, in.name());
  } else if (seen(ForeignFormat::openssl_salted)) {
    info.format = InspectedFormat::openssl_salted;
    if (size < kSaltedHeaderLen) {
      mark_truncated(info, in.name() + ": truncated: shorter than openssl's 16-byte Salted__ header");
    } else {
      info.header_size = kSaltedHeaderLen;
    }
  } else if (seen(ForeignFormat::openpgp)) {
    info.format = InspectedFormat::openpgp;
    info.armor = look->armored;
  } else if (seen(ForeignFormat::likely_tink_stream) && size >= prefix[0] + kTagLen) {
    // A bare Tink stream has no magic: its header length byte and a length
    // that holds the header and one tag are all there is to go by, and its
    // segment size is not in the file.
    info.format = InspectedFormat::tink;
    info.likely = true;
    info.key_bits = (prefix[0] - 1u - static_cast<unsigned>(kNoncePrefixLen)) * 8u;
    info.header_size = 0;
  } else {
    info.problem = in.name() + ": not a format paes knows";
  }
  if (in.armored()) {
    info.armor = true;
    if (!names_stdio(path) && !names_stream(path)) info.armored_size = std::filesystem::file_size(path);
  }
  return info;
}

}  // namespace paes
