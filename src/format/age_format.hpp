// age v1 files (C2SP age.md): the version line, age's header of stanzas
// (format/stanza_header.hpp) and its MAC, then the payload: a 16-byte nonce
// and the STREAM of 64 KiB chunks, each ChaCha20-Poly1305 under the payload
// key with its own counter nonce and a last-chunk flag, so that every chunk
// seals and opens on its own: AgeChunks is the payload as a SegmentStream.
//
//   header   "age-encryption.org/v1" LF, stanzas, "--- " base64(HMAC) LF
//            MAC key HKDF-SHA-256(file key, salt empty, info "header")
//   payload  nonce (16) | chunk 0 | chunk 1 | ...
//            payload key HKDF-SHA-256(file key, salt nonce, info "payload")
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "format/segment_stream.hpp"
#include "format/stanza_header.hpp"
#include "paes/secret.hpp"

namespace paes {

inline constexpr std::string_view kAgeVersionLine = "age-encryption.org/v1\n";
inline constexpr std::size_t kAgePayloadNonceLen = 16;
inline constexpr std::uint64_t kAgeChunkPlainLen = 64 * 1024;
// age.md's payload key is HKDF-SHA-256 to 32 bytes.
inline constexpr std::size_t kAgePayloadKeyLen = 32;

// HKDF-SHA-256(ikm = file key, salt = payload nonce, info = "payload").
SecretBytes age_payload_key(const SecretBytes& file_key, std::span<const std::uint8_t> nonce);

// The version line and header of stanzas, its MAC under the file key: the
// bytes before the payload nonce. Throws Error as encode_stanza.
std::string encode_age_header(const std::vector<Stanza>& stanzas, const SecretBytes& file_key);

// The payload's chunks, sixteen to an engine's chunk (1 MiB of plaintext).
class AgeChunks final : public SegmentStream {
 public:
  explicit AgeChunks(const SecretBytes& payload_key) : payload_key_(payload_key.clone()) {}
  std::uint64_t first_plain_len() const override { return kAgeChunkPlainLen; }
  std::uint64_t plain_len() const override { return kAgeChunkPlainLen; }
  std::uint64_t segments_per_chunk() const override { return 16; }
  bool empty_final_after_full() const override { return false; }
  // The counter is 88 bits: a file would reach 2^64 chunks at a zettabyte.
  std::uint64_t max_segments() const override { return ~std::uint64_t{0}; }
  Error too_many_segments() const override;
  const char* unit() const override { return "chunk"; }
  std::unique_ptr<SegmentCodec> make_codec(Direction direction) const override;
  SecretBytes ticket(Direction direction) const override;
  BackendChoice backend() const override { return {std::string(), std::nullopt}; }

 private:
  SecretBytes payload_key_;
};

}  // namespace paes
