// The sealed format: authenticated, streaming, parallel (docs/FORMAT.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "paes/mode.hpp"
#include "paes/transform.hpp"

namespace paes {

enum class SealedFormat {
  paes,  // the paes preamble, then a Tink AES-GCM-HKDF stream bound to it
  tink,  // a bare Tink AES-GCM-HKDF stream, associated data = aad
};

// The highest scrypt cost (log2 N) a passphrase seals with. N = 2^20 takes
// 1 GiB; 2^21 would take 2 GiB and a little more, past the cap that bounds
// what a hostile file can make paes allocate, so no paes could open it.
inline constexpr std::uint8_t kMaxScryptLog2N = 20;

// That cap: the most memory, in bytes, scrypt may take when paes opens a file.
std::uint64_t max_scrypt_memory();

struct SealedSpec {
  Direction direction = Direction::encrypt;
  SealedFormat format = SealedFormat::paes;
  // Either a raw key (16 or 32 bytes) or a passphrase (paes format only), from
  // which scrypt derives a key of key_len bytes.
  SecretBytes key;
  SecretBytes passphrase;
  std::size_t key_len = 32;     // with a passphrase, when sealing
  std::uint8_t scrypt_log2_n = 18;  // with a passphrase, when sealing; at most kMaxScryptLog2N
  std::vector<std::uint8_t> aad;
  std::uint32_t segment_len = 1u << 20;  // sealing, and opening a bare Tink stream
};

// Seals or opens input into output. Opening verifies every segment and
// detects truncation, reordering, extension and wrong keys; nothing appears
// under a file output's name unless all of it verified. To a stream, each
// segment is written only after it verified, and a failure throws after the
// verified segments before it were written. Throws Error.
TransformReport run_sealed(const SealedSpec& spec, const std::string& input_path,
                           const std::string& output_path, const TransformOptions& options);

}  // namespace paes
