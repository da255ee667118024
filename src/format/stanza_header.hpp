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
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "paes/error.hpp"
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

// One stanza read line by line, as age.md writes it (and age-plugin.md's
// messages, which are stanzas too): `first_line` is "-> " and the type and
// arguments, without its LF; `next_line` gives each body line without its
// LF. Throws what `malformed(why)` makes for anything age.md does not allow.
Stanza read_stanza(std::string_view first_line, const std::function<std::string_view()>& next_line,
                   const std::function<Error(const std::string&)>& malformed);

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

// Where a header's text ends in `text`: just past the LF of its first line
// that starts with "---" (its MAC line, or what parsing refuses as one);
// nothing when `text` holds no such whole line.
std::optional<std::size_t> end_of_mac_line(std::span<const std::uint8_t> text);

// Parses stanzas and the MAC line at the start of `bytes` (which may go on
// past them, into the payload). Throws Error ("<name>: malformed header
// (...)") for anything age.md does not allow, more than kMaxStanzas stanzas,
// or a header longer than kMaxHeaderLen or cut short.
StanzaHeader parse_stanza_header(std::span<const std::uint8_t> bytes, const std::string& name);

// The key of a header's MAC. age's, for a file key (16 bytes, from the
// stanzas): HKDF-SHA-256(ikm = file key, salt = empty, info = "header").
// For a paes file sealed with a raw key (version 3 without stanzas, whose
// MAC line is its key commitment): the same with info = "paes v3 raw key
// header", so that the label says which secret keys the MAC.
class HeaderMacKey {
 public:
  static HeaderMacKey of_file_key(const SecretBytes& file_key);
  static HeaderMacKey of_raw_key(const SecretBytes& raw_key);
  const SecretBytes& bytes() const { return key_; }

 private:
  explicit HeaderMacKey(SecretBytes key) : key_(std::move(key)) {}
  SecretBytes key_;
};

// The header after `prefix` (the preamble): the stanzas, then the MAC line
// whose MAC covers `prefix`, the stanzas and `associated_data`. Throws Error
// as encode_stanza.
std::string encode_stanza_header(std::span<const std::uint8_t> prefix, const std::vector<Stanza>& stanzas,
                                 const HeaderMacKey& mac_key, std::span<const std::uint8_t> associated_data = {});

// HMAC-SHA-256 under `mac_key` over `prefix` || `mac_input` ||
// `associated_data`: age's header MAC when the associated data is empty (a
// header's text ends at its "---", so what follows is unambiguous).
HeaderMac header_mac(const HeaderMacKey& mac_key, std::span<const std::uint8_t> prefix, std::string_view mac_input,
                     std::span<const std::uint8_t> associated_data = {});

// True when `header`'s MAC is the one `mac_key` gives, compared in constant
// time.
bool header_mac_matches(const HeaderMacKey& mac_key, std::span<const std::uint8_t> prefix, const StanzaHeader& header,
                        std::span<const std::uint8_t> associated_data = {});

}  // namespace paes
