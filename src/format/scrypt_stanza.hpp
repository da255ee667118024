// age's scrypt recipient stanza (C2SP age.md, "The scrypt recipient type"),
// computed exactly as age computes it, so that a passphrase stanza moves
// between age's files and paes' in both directions:
//
//   -> scrypt base64(salt) log2N        salt: 16 random bytes; log2N decimal
//   base64(ChaCha20-Poly1305(wrap key, nonce = 12 zero bytes, file key))
//
//   wrap key = scrypt(passphrase, salt = "age-encryption.org/v1/scrypt" || salt,
//                     N = 2^log2N, r = 8, p = 1, 32 bytes)
//
// As age.md requires, a header with a scrypt stanza has no other: a
// passphrase file has one reader, and no recipient can be added beside it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "format/stanza_header.hpp"
#include "paes/secret.hpp"

namespace paes {

inline constexpr std::string_view kScryptStanzaType = "scrypt";
// age's own limit when it opens a file: N = 2^22 takes 4 GiB.
inline constexpr std::uint8_t kMaxScryptWorkFactor = 22;

// The file key wrapped under `passphrase` with a fresh salt and work factor
// 2^log2_n (1 to kMaxScryptWorkFactor).
Stanza wrap_scrypt(const SecretBytes& file_key, const SecretBytes& passphrase, std::uint8_t log2_n);

// What a scrypt stanza says before any scrypt runs. Throws Error ("<name>:
// malformed scrypt stanza (...)") for one age.md doesn't allow: not two
// arguments, a salt that is not 16 bytes of canonical base64, a work factor
// that is not a decimal without leading zeros from 1, a body that is not 32
// bytes; and for a work factor above kMaxScryptWorkFactor.
struct ScryptStanzaParams {
  std::vector<std::uint8_t> salt;
  std::uint8_t log2_n = 0;
};
ScryptStanzaParams parse_scrypt_stanza(const Stanza& stanza, const std::string& name);

// The file key when `passphrase` opens `stanza`, a scrypt stanza; nothing when
// it is another passphrase. Throws Error as parse_scrypt_stanza.
std::optional<SecretBytes> unwrap_scrypt(const Stanza& stanza, const SecretBytes& passphrase, const std::string& name);

// Throws Error ("<name>: malformed header (...)") when `stanzas` hold a
// scrypt stanza and any other.
void check_scrypt_stands_alone(const std::vector<Stanza>& stanzas, const std::string& name);

}  // namespace paes
