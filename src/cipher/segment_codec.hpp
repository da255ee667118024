// One segment of a segmented AEAD stream, sealed or opened at its index with
// its last flag: the unit both sealed bodies are made of (format/
// segment_stream.hpp lays them out). Two codecs:
//   Tink's AES-GCM-HKDF streaming AEAD: AES-GCM under the derived segment
//     key, nonce = prefix(7) || uint32_be(index) || last(1), no AAD, on a
//     cipher backend's AES-GCM (cipher/backend.hpp);
//   age's payload (C2SP age.md, "Payload"): ChaCha20-Poly1305 from OpenSSL
//     under the payload key, nonce = uint88_be(index) || last(1), no AAD.
// Both put a 16-byte tag after the ciphertext. One codec per worker thread.
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
  SegmentAuthenticationError(const std::string& message, std::uint64_t index, Remedy remedy)
      : Error(message, ErrorKind::failure, remedy), index_(index) {}
  std::uint64_t index() const noexcept { return index_; }

 private:
  std::uint64_t index_;
};

class SegmentCodec {
 public:
  virtual ~SegmentCodec() = default;
  // Encrypts `len` bytes into `out` (len + 16 bytes, may be `in`); returns len + 16.
  std::size_t seal(std::uint64_t index, bool last, std::uint8_t* out, const std::uint8_t* in, std::size_t len);
  // Decrypts and verifies a segment of `len` >= 16 bytes into `out` (may be
  // `in`); returns len - 16. Throws SegmentAuthenticationError when the tag
  // doesn't verify: the key, the data, the segment's position or its last
  // flag is wrong.
  std::size_t open(std::uint64_t index, bool last, std::uint8_t* out, const std::uint8_t* in, std::size_t len);

 protected:
  // What the stream calls a segment in messages ("segment", age's "chunk"),
  // what a failed tag may mean, and what the user may do about it.
  SegmentCodec(const char* unit, const char* causes, Remedy remedy) : unit_(unit), causes_(causes), remedy_(remedy) {}

 private:
  virtual void seal_segment(std::uint64_t index, bool last, std::uint8_t* out, const std::uint8_t* in,
                            std::size_t len) = 0;
  virtual bool open_segment(std::uint64_t index, bool last, std::uint8_t* out, const std::uint8_t* in,
                            std::size_t len) = 0;
  const char* unit_;
  const char* causes_;
  Remedy remedy_;
};

class TinkSegmentCodec final : public SegmentCodec {
 public:
  // segment_key is 16 or 32 bytes (AES-128-GCM or AES-256-GCM), run on
  // `backend`'s AES-GCM. Indices are below 2^32 (the stream's job checks).
  TinkSegmentCodec(const CipherBackend& backend, const SecretBytes& segment_key, const NoncePrefix& prefix,
                   Direction direction);

 private:
  void seal_segment(std::uint64_t index, bool last, std::uint8_t* out, const std::uint8_t* in,
                    std::size_t len) override;
  bool open_segment(std::uint64_t index, bool last, std::uint8_t* out, const std::uint8_t* in,
                    std::size_t len) override;
  GcmNonce nonce(std::uint64_t index, bool last) const;
  NoncePrefix prefix_;
  std::unique_ptr<SegmentAead> aead_;
};

// age's payload chunks. ChaCha20 is OpenSSL's on the CPU whatever the
// backend: no backend of paes' runs it.
class AgeChunkCodec final : public SegmentCodec {
 public:
  // payload_key: 32 bytes (age_payload_key, format/age_format.hpp).
  AgeChunkCodec(const SecretBytes& payload_key, Direction direction);
  ~AgeChunkCodec() override;
  AgeChunkCodec(const AgeChunkCodec&) = delete;
  AgeChunkCodec& operator=(const AgeChunkCodec&) = delete;

 private:
  void seal_segment(std::uint64_t index, bool last, std::uint8_t* out, const std::uint8_t* in,
                    std::size_t len) override;
  bool open_segment(std::uint64_t index, bool last, std::uint8_t* out, const std::uint8_t* in,
                    std::size_t len) override;
  struct Evp;
  std::unique_ptr<Evp> evp_;
};

}  // namespace paes
