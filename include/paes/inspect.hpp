// What a file is, read without any key: a paes sealed file's version, key
// source, recipients and geometry, with its plaintext size computed from its
// length; a bare Tink stream, an age file, an openssl `Salted__` file and an
// OpenPGP message named as such (docs/FORMAT.md section 9).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace paes {

enum class InspectedFormat {
  paes,            // a paes sealed file (its preamble read)
  tink,            // a bare Tink AES-GCM-HKDF stream, by its first byte only: "likely"
  age,             // age-encryption.org/v1, binary or armored
  openssl_salted,  // openssl enc's "Salted__" and an 8-byte salt
  openpgp,         // an OpenPGP message, binary or armored
  unknown,
};

enum class InspectedKeySource { none, raw_key, passphrase, recipients };

struct SealedFileInfo {
  InspectedFormat format = InspectedFormat::unknown;
  // True where the format is guessed from bytes that other data could hold
  // too (a bare Tink stream has no magic).
  bool likely = false;
  bool armor = false;
  // paes: the preamble's version (1 or 3; another when the preamble is
  // refused, with `problem` saying why). age: 1.
  unsigned version = 0;
  InspectedKeySource key_source = InspectedKeySource::none;
  unsigned scrypt_log2_n = 0;             // a passphrase file's scrypt N = 2^this
  // paes: whether the file commits to its key and associated data (version
  // 3: its header's MAC); version 1 opens only when allowed to not commit.
  bool key_committing = false;
  std::vector<std::string> stanza_types;  // a version-3 or binary age header's, in order
  unsigned key_bits = 0;                  // AES key size; 0 where unknown
  std::uint32_t segment_size = 0;         // ciphertext segment size; 0 where unknown
  std::optional<std::uint64_t> file_size;  // bytes read (a stream: to its end; armor: the bytes it decodes to)
  // An armored file's own size, its text's bytes (not known for a stream).
  std::optional<std::uint64_t> armored_size;
  // The bytes before the encryption: the preamble and a version-3 header;
  // age's version line and header (age-inspect's "header").
  std::optional<std::uint64_t> header_size;
  // The encryption's own bytes (the Tink stream header and a tag a segment;
  // age's nonce and a tag a chunk), and the plaintext the file decrypts to
  // if it verifies: known only where the length is one sealing makes, and
  // header + overhead + plaintext is the file's size.
  std::optional<std::uint64_t> overhead;
  std::optional<std::uint64_t> plaintext_size;
  // A length no sealing makes (cut short, or bytes appended; a cut that
  // leaves a length sealing makes shows only when the key opens the file).
  bool truncated = false;
  // Why the file can't be opened as it is (truncated, a refused preamble or
  // header), or "" when nothing was found wrong; never a verdict on the
  // ciphertext, which only the key checks.
  std::string problem;
};

// Reads the file at `path` ("" or "-": standard input; a pipe is read to its
// end to learn its length) and says what it is. Never needs a key and never
// throws for what the bytes hold (an unknown or damaged file is a result);
// throws Error only when the file can't be read.
SealedFileInfo inspect_sealed_file(const std::string& path);

// "paes", "tink", "age", "openssl-salted", "openpgp", "unknown".
const char* inspected_format_name(InspectedFormat format);
// "raw-key", "passphrase", "recipients", or "" for none.
const char* inspected_key_source_name(InspectedKeySource source);

}  // namespace paes
