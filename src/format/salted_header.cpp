#include "format/salted_header.hpp"

#include <cstring>
#include <string_view>

#include "cipher/kdf.hpp"
#include "paes/error.hpp"

namespace paes {
namespace {

constexpr std::uint8_t kSaltedMagic[8] = {'S', 'a', 'l', 't', 'e', 'd', '_', '_'};
static_assert(sizeof kSaltedMagic + kSaltedSaltLen == kSaltedHeaderLen);

}  // namespace

std::array<std::uint8_t, kSaltedHeaderLen> encode_salted_header(const SaltedSalt& salt) {
  std::array<std::uint8_t, kSaltedHeaderLen> header{};
  std::memcpy(header.data(), kSaltedMagic, sizeof kSaltedMagic);
  std::memcpy(header.data() + sizeof kSaltedMagic, salt.data(), kSaltedSaltLen);
  return header;
}

SaltedSalt decode_salted_header(std::span<const std::uint8_t> bytes, const std::string& name) {
  if (bytes.size() < kSaltedHeaderLen || std::memcmp(bytes.data(), kSaltedMagic, sizeof kSaltedMagic) != 0) {
    // "Salted__" in base64 is "U2FsdGVkX1": the same file as openssl enc -a writes it.
    constexpr std::string_view kArmoredMagic = "U2FsdGVkX1";
    const std::string_view start(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    if (start.starts_with(kArmoredMagic)) {
      throw Error(name + ": not openssl enc -pbkdf2 data as it is, but base64 text of it (it starts with "
                  "\"U2FsdGVkX1\", \"Salted__\" in base64)",
                  ErrorKind::failure, Remedy::armored_input);
    }
    throw Error(name + ": not openssl enc -pbkdf2 data (no \"Salted__\" header)", ErrorKind::failure,
                Remedy::no_salt);
  }
  SaltedSalt salt;
  std::memcpy(salt.data(), bytes.data() + sizeof kSaltedMagic, kSaltedSaltLen);
  return salt;
}

CipherSpec salted_cipher_spec(const CipherSpec& base, const Pbkdf2Key& pbkdf2, std::span<const std::uint8_t> salt) {
  check_key_length(pbkdf2.key_len);
  // openssl enc -pbkdf2 derives key || IV in one PBKDF2 output (no IV for ECB).
  const std::size_t iv_len = mode_uses_iv(base.mode) ? kBlockLen : 0;
  const SecretBytes derived =
      pbkdf2_hmac(pbkdf2.passphrase, salt, pbkdf2.iterations, pbkdf2.digest, pbkdf2.key_len + iv_len);
  CipherSpec spec{base.mode, base.direction, SecretBytes(derived.data(), pbkdf2.key_len), {}, base.padding};
  if (iv_len != 0) std::memcpy(spec.iv.data(), derived.data() + pbkdf2.key_len, kBlockLen);
  return spec;
}

}  // namespace paes
