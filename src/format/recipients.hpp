// Version 2 of the sealed format: the file key wrapped to X25519 recipients
// (docs/FORMAT.md, section 8). After the preamble comes a recipients block,
//
//   count N (1 byte, 1..255) | N stanzas of ephemeral public key (32)
//                              | wrapped file key (32) | GCM tag (16)
//
// and the body's associated data is preamble || recipients block || --aad,
// so the stanzas are authenticated by the body itself (no separate MAC).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "paes/sealed.hpp"
#include "paes/secret.hpp"

namespace paes {

inline constexpr std::size_t kX25519KeyLen = 32;
inline constexpr std::size_t kFileKeyLen = 32;  // AES-256 only for recipients
inline constexpr std::size_t kStanzaLen = kX25519KeyLen + kFileKeyLen + 16;
inline constexpr std::size_t kMaxRecipients = 255;  // the count is one byte

// What a recipient string and an identity file's secret line start with.
inline constexpr std::string_view kRecipientPrefix = "paes-x25519:";
inline constexpr std::string_view kIdentityPrefix = "paes-x25519-secret:";

struct Stanza {
  X25519PublicKey ephemeral{};
  std::array<std::uint8_t, kFileKeyLen + 16> wrapped{};  // ciphertext || tag
};

struct RecipientsBlock {
  std::vector<Stanza> stanzas;

  static std::size_t length(std::size_t count) { return 1 + kStanzaLen * count; }
  std::vector<std::uint8_t> encode() const;
  // Parses the block at the start of `bytes` (which may go on past it).
  // Throws Error: "truncated recipients block", "corrupt recipients block
  // (no recipients)".
  static RecipientsBlock decode(std::span<const std::uint8_t> bytes, const std::string& name);
};

// Wraps the file key to one recipient with a fresh ephemeral key pair.
Stanza wrap_file_key(const SecretBytes& file_key, const X25519PublicKey& recipient);
// The file key when `identity` (an X25519 private key) opens `stanza`;
// nothing when the GCM tag doesn't verify (another recipient's stanza).
// Throws Error for a low-order ephemeral key (an all-zero shared secret).
std::optional<SecretBytes> unwrap_file_key(const Stanza& stanza, const SecretBytes& identity,
                                           const X25519PublicKey& identity_public);

// "paes-x25519:<64 lowercase hex>".
std::string format_recipient(const X25519PublicKey& key);
// The public key of a recipient string; nothing when it is malformed.
std::optional<X25519PublicKey> parse_recipient(std::string_view text);

}  // namespace paes
