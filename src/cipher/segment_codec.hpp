// One segment of Tink's AES-GCM-HKDF streaming AEAD: AES-GCM under the derived
// segment key, nonce = prefix(7) || uint32_be(index) || last(1), no GCM AAD,
// 16-byte tag after the ciphertext. One SegmentCodec per thread; the AES-GCM
// is a cipher backend's (cipher/backend.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "cipher/backend.hpp"
#include "paes/error.hpp"

namespace paes {

inline constexpr std::size_t kNoncePrefixLen = 7;
using NoncePrefix = std::array<std::uint8_t, kNoncePrefixLen>;

// A segment whose tag did not verify, and which one: segment 0 failing
// first says more than a later one (a wrong key, or a wrong segment size
// where the reader is told it).
class SegmentAuthenticationError : public Error {
 public:
  SegmentAuthenticationError(const std::string& message, std::uint32_t index)
      : Error(message, ErrorKind::failure, Remedy::associated_data), index_(index) {}
  std::uint32_t index() const noexcept { return index_; }

 private:
  std::uint32_t index_;
};

class SegmentCodec {
 public:
  // segment_key is 16 or 32 bytes (AES-128-GCM or AES-256-GCM), run on
  // `backend`'s AES-GCM.
  SegmentCodec(const CipherBackend& backend, const SecretBytes& segment_key,
               const NoncePrefix& prefix, Direction direction);

  // Encrypts `len` bytes into `out` (len + 16 bytes, may be `in`); returns len + 16.
  std::size_t seal(std::uint32_t index, bool last, std::uint8_t* out, const std::uint8_t* in,
                   std::size_t len);
  // Decrypts and verifies a segment of `len` >= 16 bytes into `out` (may be
  // `in`); returns len - 16. Throws SegmentAuthenticationError when the tag
  // doesn't verify: the key, the data, the segment's position or its last
  // flag is wrong.
  std::size_t open(std::uint32_t index, bool last, std::uint8_t* out, const std::uint8_t* in,
                   std::size_t len);

 private:
  GcmNonce nonce(std::uint32_t index, bool last) const;
  NoncePrefix prefix_;
  std::unique_ptr<SegmentAead> aead_;
};

}  // namespace paes
