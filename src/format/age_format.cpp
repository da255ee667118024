#include "format/age_format.hpp"

#include <string>

#include "cipher/kdf.hpp"
#include "job/ticket.hpp"
#include "util/text.hpp"

namespace paes {

SecretBytes age_payload_key(const SecretBytes& file_key, std::span<const std::uint8_t> nonce) {
  return hkdf_sha256(file_key, nonce, as_bytes("payload"), kAgePayloadKeyLen);
}

std::string encode_age_header(const std::vector<Stanza>& stanzas, const SecretBytes& file_key) {
  return std::string(kAgeVersionLine) +
         encode_stanza_header(as_bytes(kAgeVersionLine), stanzas, HeaderMacKey::of_file_key(file_key));
}

Error AgeChunks::too_many_segments() const { return Error("too large for age's format: 2^64 chunks or more"); }

std::unique_ptr<SegmentCodec> AgeChunks::make_codec(Direction direction) const {
  return std::make_unique<AgeChunkCodec>(payload_key_, direction);
}

SecretBytes AgeChunks::ticket(Direction direction) const {
  TicketWriter w;
  w.start(TicketKind::age_chunks, backend());
  w.u8(static_cast<std::uint8_t>(direction));
  w.raw(payload_key_.data(), payload_key_.size());
  return w.finish();
}

}  // namespace paes
