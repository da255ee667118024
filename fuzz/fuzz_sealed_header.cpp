// The sealed format's parsers on arbitrary bytes: the 32-byte paes preamble,
// then (version 2) the recipients block, then the Tink stream header after it; and the input as a bare Tink stream's
// header for both key sizes. Each parser must accept or refuse with
// paes::Error, and what it accepts must encode back to the very same bytes
// (nothing in a header may be ignored: it is all authenticated).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "format/recipients.hpp"
#include "format/sealed_format.hpp"
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
    if (preamble.key_source == paes::KeySource::x25519_recipients) {
      const auto rest = input.subspan(paes::kPreambleLen);
      const paes::RecipientsBlock block = paes::RecipientsBlock::decode(rest, "fuzz");
      const auto block_bytes = block.encode();
      require(!block.stanzas.empty() && block.stanzas.size() <= paes::kMaxRecipients, "stanza count out of range");
      require(block_bytes.size() == paes::RecipientsBlock::length(block.stanzas.size()) &&
                  block_bytes.size() <= rest.size(),
              "recipients block length");
      require(std::equal(block_bytes.begin(), block_bytes.end(), rest.begin()),
              "recipients block does not encode back");
      header_at += block_bytes.size();
    }
    check_stream_header(input.subspan(header_at), preamble.key_len);
  } catch (const paes::Error&) {
  }
  for (const std::size_t key_len : {16, 32}) check_stream_header(input, key_len);
  return 0;
}
