#include "cipher/segment_codec.hpp"

#include <cstring>
#include <string>

#include "paes/error.hpp"

namespace paes {

SegmentCodec::SegmentCodec(const CipherBackend& backend, const SecretBytes& segment_key,
                           const NoncePrefix& prefix, Direction direction)
    : prefix_(prefix), aead_(backend.make_segment(segment_key, direction)) {}

GcmNonce SegmentCodec::nonce(std::uint32_t index, bool last) const {
  GcmNonce nonce;
  std::memcpy(nonce.data(), prefix_.data(), kNoncePrefixLen);
  nonce[7] = static_cast<std::uint8_t>(index >> 24);
  nonce[8] = static_cast<std::uint8_t>(index >> 16);
  nonce[9] = static_cast<std::uint8_t>(index >> 8);
  nonce[10] = static_cast<std::uint8_t>(index);
  nonce[11] = last ? 1 : 0;
  return nonce;
}

std::size_t SegmentCodec::seal(std::uint32_t index, bool last, std::uint8_t* out,
                               const std::uint8_t* in, std::size_t len) {
  aead_->seal(nonce(index, last), out, in, len);
  return len + kTagLen;
}

std::size_t SegmentCodec::open(std::uint32_t index, bool last, std::uint8_t* out,
                               const std::uint8_t* in, std::size_t len) {
  if (len < kTagLen) throw Error("truncated: segment " + std::to_string(index) + " is shorter than its tag");
  if (!aead_->open(nonce(index, last), out, in, len)) {
    throw SegmentAuthenticationError("authentication failed at segment " + std::to_string(index) +
                                         ": wrong key or passphrase, wrong associated data, or the data was corrupted, "
                                         "truncated or reordered",
                                     index);
  }
  return len - kTagLen;
}

}  // namespace paes
