// The sealed format's parsers on arbitrary bytes: the 32-byte paes preamble,
// then (version 3) the header of stanzas and its MAC line, then the Tink
// stream header after it; and the input as a bare Tink stream's header for
// both key sizes. Each parser must accept or refuse with paes::Error, and
// what it accepts must encode back to the very same bytes (nothing in a
// header may be ignored: it is all authenticated, the stanzas by the header
// MAC, which covers their text).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

#include "format/scrypt_stanza.hpp"
#include "format/sealed_format.hpp"
#include "format/stanza_header.hpp"
#include "util/base64.hpp"
#include "paes/error.hpp"

namespace {

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_sealed_header: %s\n", what);
    std::abort();
  }
}

void check_stream_header(std::span<const std::uint8_t> bytes, std::size_t key_len) {
  try {
    const paes::StreamHeader header = paes::StreamHeader::decode(bytes, key_len);
    const auto encoded = header.encode();
    require(encoded.size() == paes::StreamHeader::length(key_len), "header length changed");
    require(std::equal(encoded.begin(), encoded.end(), bytes.begin()), "header does not encode back");
  } catch (const paes::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  try {
    const paes::Preamble preamble = paes::Preamble::decode(input, "fuzz");
    const auto encoded = preamble.encode();
    require(std::equal(encoded.begin(), encoded.end(), input.begin()), "preamble does not encode back");
    std::size_t header_at = paes::kPreambleLen;
    if (preamble.version == paes::kFormatVersion) {
      const auto rest = input.subspan(paes::kPreambleLen);
      const paes::StanzaHeader header = paes::parse_stanza_header(rest, "fuzz");
      require(header.stanzas.size() <= paes::kMaxStanzas, "stanza count out of range");
      require(header.length <= rest.size() && header.length <= paes::kMaxHeaderLen + 1, "header length");
      std::string text;
      for (const paes::Stanza& stanza : header.stanzas) text += paes::encode_stanza(stanza);
      text += "--- " + paes::encode_base64(header.mac) + "\n";
      require(text.size() == header.length && std::equal(text.begin(), text.end(), rest.begin()),
              "header of stanzas does not encode back");
      require(header.mac_input == text.substr(0, text.size() - 45), "the MAC input is not the header through ---");
      // The scrypt stanza's own parser (its salt and work factor), which
      // runs before any scrypt: it must refuse, never crash or accept junk.
      for (const paes::Stanza& stanza : header.stanzas) {
        if (stanza.type != paes::kScryptStanzaType) continue;
        try {
          const paes::ScryptStanzaParams params = paes::parse_scrypt_stanza(stanza, "fuzz");
          require(params.salt.size() == 16 && params.log2_n >= 1 && params.log2_n <= paes::kMaxScryptWorkFactor &&
                      stanza.args[1] == std::to_string(params.log2_n),
                  "a scrypt stanza accepted outside age.md's grammar");
        } catch (const paes::Error&) {
        }
      }
      header_at += header.length;
    }
    check_stream_header(input.subspan(header_at), preamble.key_len);
  } catch (const paes::Error&) {
  }
  for (const std::size_t key_len : {16, 32}) check_stream_header(input, key_len);
  return 0;
}
