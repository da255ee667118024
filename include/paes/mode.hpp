// The vocabulary of a raw AES job: mode, direction, block and the full spec.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "paes/secret.hpp"

namespace paes {

inline constexpr std::size_t kBlockLen = 16;
using Block = std::array<std::uint8_t, kBlockLen>;

enum class Mode { ecb, cbc, cfb128, cfb8, cfb1, ofb, ctr };
enum class Direction { encrypt, decrypt };

inline constexpr Mode kAllModes[] = {Mode::ecb,  Mode::cbc, Mode::cfb128, Mode::cfb8,
                                     Mode::cfb1, Mode::ofb, Mode::ctr};

// CLI names: ecb cbc cfb cfb8 cfb1 ofb ctr (cfb is the 128-bit CFB, as in openssl).
std::string_view mode_name(Mode mode);
std::optional<Mode> parse_mode(std::string_view name);
std::string_view direction_name(Direction direction);

// Whether the mode takes an IV (all but ECB).
bool mode_uses_iv(Mode mode);
// Whether openssl enc pads the mode with PKCS#7 (ECB and CBC only).
bool mode_is_padded(Mode mode);

// Everything that determines the output bytes of a raw job. Two jobs with equal
// specs and inputs give identical output, whatever engine, threads or chunk size.
struct CipherSpec {
  Mode mode = Mode::ctr;
  Direction direction = Direction::encrypt;
  SecretBytes key;  // 16, 24 or 32 bytes: AES-128, -192 or -256
  Block iv{};       // ignored for ECB
  bool padding = true;  // PKCS#7 for ECB/CBC; ignored by the stream modes

  unsigned key_bits() const { return static_cast<unsigned>(key.size() * 8); }
  bool padded() const { return padding && mode_is_padded(mode); }
};

// How openssl enc's passphrase format (-pbkdf2) derives a raw mode's key and
// IV: PBKDF2-HMAC-<digest>(passphrase, salt, iterations), key_len key bytes
// and then the IV.
struct Pbkdf2Key {
  SecretBytes passphrase;
  std::uint32_t iterations = 10000;
  std::size_t key_len = 32;
  // PBKDF2's HMAC digest, an OpenSSL name (openssl enc -md): sha256 as
  // openssl's default, or sha512, sha384, sha224, sha1, md5.
  std::string digest = "sha256";
  // openssl enc -nosalt: no "Salted__" header, and PBKDF2 with an empty salt.
  bool no_salt = false;
  // openssl enc -S: this salt, kept outside the data as openssl 3 does: no
  // "Salted__" header is written or read.
  std::optional<std::array<std::uint8_t, 8>> salt;
};

// counter + blocks, as a 128-bit big-endian integer with carry into every byte
// and wrap at 2^128: what OpenSSL's CTR does to its counter block.
Block add_to_counter(const Block& counter, std::uint64_t blocks);

// Throws a usage Error unless key is 16, 24 or 32 bytes.
void check_key_length(std::size_t key_len);

}  // namespace paes
