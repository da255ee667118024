// The sealed container: a 32-byte paes preamble, then a body in Tink's
// AES-GCM-HKDF streaming AEAD wire format (docs/FORMAT.md has it byte by byte).
//
//   preamble   "PAES" | version (3; 1 read only) | key source | key length | scrypt log2 N, r, p
//              | 2 zero bytes | segment size (u32 BE) | salt (16: scrypt's in version 1, random
//              | for a version-3 raw key, else zero)
//   (version 3: age's header of stanzas and its MAC, format/stanza_header.hpp)
//   body       header_len (1) | HKDF salt (key length) | nonce prefix (7)
//              | segment 0 | segment 1 | ... (each AES-GCM ciphertext + tag)
//
// The body's associated data is preamble || aad, so every preamble bit is
// authenticated: it feeds the HKDF that makes the segment key. A bare Tink
// stream is the body alone with associated data = aad.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cipher/kdf.hpp"
#include "cipher/segment_codec.hpp"
#include "format/segment_stream.hpp"
#include "paes/foreign_format.hpp"
#include "paes/job.hpp"
#include "paes/mode.hpp"

namespace paes {

inline constexpr std::size_t kPreambleLen = 32;
// What paes writes: a header after the preamble whose MAC commits to the
// key material and the associated data (docs/FORMAT.md section 8).
inline constexpr std::uint8_t kFormatVersion = 3;
// Version 1 (a key or passphrase, no header) commits to neither: it opens
// only when the caller allows files that don't commit. Version 2, an
// unreleased recipients format whose stanzas could wrap different keys for
// different readers, is refused.
inline constexpr std::uint8_t kUncommittedFormatVersion = 1;
inline constexpr std::uint8_t kWithdrawnFormatVersion = 2;
// The body of a file whose key is in stanzas is AES-256 (its key derived
// from the 16-byte file key).
inline constexpr std::size_t kRecipientsKeyLen = 32;
inline constexpr std::size_t kScryptSaltLen = 16;
// scrypt's block size and parallelism in every passphrase file (age's choice);
// only N is a parameter.
inline constexpr std::uint8_t kScryptR = 8;
inline constexpr std::uint8_t kScryptP = 1;
inline constexpr std::uint32_t kDefaultSegmentLen = 1u << 20;
// The upper bound keeps a segment's buffers reasonable (the engines also bound
// the bytes in flight, kMaxBytesInFlight);
// the lower one is Tink's: segment 0 must hold the header, a tag and at least
// one byte (min_segment_len()).
inline constexpr std::uint32_t kMaxSegmentLen = 64u << 20;
// Segment indices are 32 bits in the nonce: a body has at most 2^32 segments.
inline constexpr std::uint64_t kMaxSegments = std::uint64_t{1} << 32;

// Version 3: raw_key (no stanzas; the MAC line is keyed by the key) or
// recipient_stanzas (the file key wrapped in age's X25519 stanzas, or in one
// scrypt stanza for a passphrase). Version 1: raw_key or scrypt_passphrase
// (scrypt's parameters in the preamble).
enum class KeySource : std::uint8_t { raw_key = 1, scrypt_passphrase = 2, recipient_stanzas = 3 };

struct Preamble {
  std::uint8_t version = kFormatVersion;
  KeySource key_source = KeySource::raw_key;
  std::uint8_t key_len = 32;
  ScryptParams scrypt{0, 0, 0};  // all zero for a raw key
  std::uint32_t segment_len = kDefaultSegmentLen;
  // Version 1 with a passphrase: scrypt's salt. Version 3 with a raw key:
  // random, so that no two files' MAC lines match. Else zero.
  std::array<std::uint8_t, kScryptSaltLen> salt{};

  std::array<std::uint8_t, kPreambleLen> encode() const;
  // Throws Error: "not a paes file (bad magic)" (an age file is named as
  // one), "unsupported version N", version 2's refusal,
  // "corrupt preamble (...)" for values no paes writes (a key source that
  // doesn't go with the version among them).
  static Preamble decode(std::span<const std::uint8_t> bytes, const std::string& name);
};

// Another tool's file, told by its first bytes (which may stop short of
// the whole file): age and OpenPGP, binary or armored (leading whitespace
// skipped, as their readers do), openssl's "Salted__", and, as a guess, a bare
// Tink stream (its first byte is a Tink header's length). Nothing when the
// bytes look like none of them. The one place that knows these signatures:
// decrypt's messages and paes inspect both ask it.
struct ForeignLook {
  ForeignFormat format;
  bool armored = false;
};
std::optional<ForeignLook> recognize_foreign_format(std::span<const std::uint8_t> start);

// Throws a usage Error unless key_len is 16 or 32 and segment_len in range.
void check_sealed_params(std::size_t key_len, std::uint64_t segment_len);
std::uint64_t min_segment_len(std::size_t key_len);

// The Tink header that opens the body.
struct StreamHeader {
  std::vector<std::uint8_t> salt;  // key_len bytes
  NoncePrefix nonce_prefix{};

  static std::size_t length(std::size_t key_len) { return 1 + key_len + kNoncePrefixLen; }
  static StreamHeader random(std::size_t key_len);
  std::vector<std::uint8_t> encode() const;
  // Throws Error "corrupt header" when the length byte doesn't match key_len.
  static StreamHeader decode(std::span<const std::uint8_t> bytes, std::size_t key_len);
};

}  // namespace paes
