// The header of stanzas that age's format defines (C2SP age.md, "Header"),
// which version 3 of the sealed format carries after its preamble
// (docs/FORMAT.md section 8):
//
//   stanza*  = "-> " type *(" " argument) LF   body wrapped at 64 columns
//   MAC line = "--- " base64(HMAC-SHA-256) LF
//
// The body is canonical unpadded base64 in full 64-character lines and one
// final line shorter than 64 (empty when the body fills its lines). Parsing
// is as strict as age.md asks: anything else is refused, so each header has
// one encoding and its MAC covers exactly what was parsed. Stanza types this
// code doesn't know are kept (a re-key copies them) and ignored when opening.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "paes/secret.hpp"

namespace paes {

struct Stanza {
  std::string type;
  std::vector<std::string> args;
  std::vector<std::uint8_t> body;
};

// Bounds a hostile header can't pass: ~4,000 X25519 stanzas fit in 1 MiB.
inline constexpr std::size_t kMaxHeaderLen = std::size_t{1} << 20;
inline constexpr std::size_t kMaxStanzas = 4096;
inline constexpr std::size_t kHeaderMacLen = 32;
using HeaderMac = std::array<std::uint8_t, kHeaderMacLen>;

// What the MAC line starts with, and what a stanza line starts with.
inline constexpr std::string_view kMacLinePrefix = "---";
inline constexpr std::string_view kStanzaLinePrefix = "->";

// A stanza as age.md writes it. Throws Error for a type or argument that is
// empty or not printable ASCII without spaces (age.md's 1*VCHAR).
std::string encode_stanza(const Stanza& stanza);

struct StanzaHeader {
  std::vector<Stanza> stanzas;
  // The header's bytes from the first stanza through "---": with what comes
  // before it (the preamble, or age's version line), what the MAC covers.
  std::string mac_input;
  HeaderMac mac{};
  // The bytes the header took in what it was parsed from, through the MAC
  // line's LF: the payload starts there.
  std::size_t length = 0;
};

// Parses stanzas and the MAC line at the start of `bytes` (which may go on
// past them, into the payload). Throws Error ("<name>: malformed header
// (...)") for anything age.md does not allow, more than kMaxStanzas stanzas,
// or a header longer than kMaxHeaderLen or cut short.
StanzaHeader parse_stanza_header(std::span<const std::uint8_t> bytes, const std::string& name);

// The header after `prefix` (the preamble): the stanzas, then the MAC line
// whose MAC covers `prefix` and the stanzas. Throws Error as encode_stanza.
std::string encode_stanza_header(std::span<const std::uint8_t> prefix, const std::vector<Stanza>& stanzas,
                                 const SecretBytes& file_key);

// HMAC-SHA-256 under HKDF-SHA-256(ikm = file key, salt = empty, info =
// "header") over `prefix` || `mac_input`, age's header MAC.
HeaderMac header_mac(const SecretBytes& file_key, std::span<const std::uint8_t> prefix, std::string_view mac_input);

// True when `header`'s MAC is the one `file_key` gives, compared in constant
// time.
bool header_mac_matches(const SecretBytes& file_key, std::span<const std::uint8_t> prefix, const StanzaHeader& header);

}  // namespace paes
