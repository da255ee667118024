#include "api/recipients.hpp"

#include <algorithm>
#include <string>
#include <string_view>

#include "cipher/kdf.hpp"
#include "format/sealed_format.hpp"
#include "format/x25519_stanza.hpp"
#include "paes/age_keys.hpp"
#include "paes/error.hpp"

namespace paes {
namespace {

SecretBytes unwrap_with_identities(const std::vector<SecretBytes>& identities, const StanzaHeader& header,
                                   const std::string& name) {
  for (const SecretBytes& identity : identities) {
    const X25519PublicKey own = x25519_public_key(identity);
    for (const Stanza& stanza : header.stanzas) {
      if (stanza.type != kX25519StanzaType) continue;  // a type this paes doesn't know: not ours
      if (auto file_key = unwrap_x25519(stanza, identity, own, name)) return std::move(*file_key);
    }
  }
  const std::size_t n = header.stanzas.size();
  throw Error("no identity matches any of the " + std::to_string(n) + (n == 1 ? " recipient of " : " recipients of ") +
              name);
}

// Where the header's text ends in `bytes`: just past the LF of its MAC
// line, or bytes.size() when it holds no whole MAC line.
std::size_t end_of_stanza_text(std::span<const std::uint8_t> bytes) {
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  for (std::size_t line_start = 0; line_start < text.size();) {
    const std::size_t end = text.find('\n', line_start);
    if (end == std::string_view::npos) break;
    if (text.substr(line_start).starts_with(kMacLinePrefix)) return end + 1;
    line_start = end + 1;
  }
  return bytes.size();
}

// The header's text, `at` bytes into `in`: its lines up to and including the
// MAC line, and never more than kMaxHeaderLen and one byte, which parsing
// then refuses. A file is read ahead in one piece and then just the header
// taken; a pipe a byte at a time, since it can't give back what was read
// past the header.
std::vector<std::uint8_t> read_stanza_text(InputEndpoint& in, std::uint64_t at) {
  std::vector<std::uint8_t> text;
  if (in.random_access()) {
    const std::uint64_t size = in.size().value_or(0);
    text.resize(static_cast<std::size_t>(std::min<std::uint64_t>(size - std::min(size, at), kMaxHeaderLen + 1)));
    in.file().read_at(at, text);
    text.resize(end_of_stanza_text(text));
    if (in.read_prefix(text) != text.size()) throw Error(in.name() + ": shrank while its header was read");
    return text;
  }
  std::size_t line_start = 0;
  std::uint8_t byte = 0;
  while (text.size() <= kMaxHeaderLen && in.read_prefix({&byte, 1}) == 1) {
    text.push_back(byte);
    if (byte != '\n') continue;
    const std::string_view line(reinterpret_cast<const char*>(text.data()) + line_start, text.size() - line_start);
    if (line.starts_with(kMacLinePrefix)) break;
    line_start = text.size();
  }
  return text;
}

}  // namespace

OpenedStanzas open_stanzas(const std::vector<SecretBytes>& identities, std::span<const std::uint8_t> preamble,
                           InputEndpoint& in) {
  OpenedStanzas opened{parse_stanza_header(read_stanza_text(in, preamble.size()), in.name()), {}};
  opened.file_key = unwrap_with_identities(identities, opened.header, in.name());
  if (!header_mac_matches(opened.file_key, preamble, opened.header)) {
    throw Error(in.name() + ": header MAC mismatch: the header was changed after sealing, or its stanzas don't "
                "all wrap the same file key (refused before any plaintext)");
  }
  return opened;
}

SecretBytes body_key(const SecretBytes& file_key) {
  constexpr std::string_view kBodyInfo = "paes v3 body";
  const auto* info = reinterpret_cast<const std::uint8_t*>(kBodyInfo.data());
  return hkdf_sha256(file_key, {}, {info, kBodyInfo.size()}, kRecipientsKeyLen);
}

}  // namespace paes
