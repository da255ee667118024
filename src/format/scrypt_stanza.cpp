#include "format/scrypt_stanza.hpp"

#include <algorithm>
#include <array>
#include <charconv>

#include "cipher/kdf.hpp"
#include "cipher/x25519.hpp"
#include "format/x25519_stanza.hpp"
#include "paes/error.hpp"
#include "util/base64.hpp"

namespace paes {
namespace {

constexpr std::string_view kSaltLabel = "age-encryption.org/v1/scrypt";
constexpr std::size_t kSaltLen = 16;

SecretBytes wrap_key(const SecretBytes& passphrase, std::span<const std::uint8_t> salt, std::uint8_t log2_n) {
  std::vector<std::uint8_t> labelled(kSaltLabel.begin(), kSaltLabel.end());
  labelled.insert(labelled.end(), salt.begin(), salt.end());
  return scrypt_key(passphrase, labelled, {log2_n, 8, 1}, 32);
}

}  // namespace

Stanza wrap_scrypt(const SecretBytes& file_key, const SecretBytes& passphrase, std::uint8_t log2_n) {
  if (file_key.size() != kFileKeyLen) throw Error("internal: a file key is 16 bytes");
  if (log2_n < 1 || log2_n > kMaxScryptWorkFactor) throw Error("internal: scrypt work factor out of range");
  std::array<std::uint8_t, kSaltLen> salt{};
  random_bytes(salt);
  Stanza stanza;
  stanza.type = kScryptStanzaType;
  stanza.args = {encode_base64(salt), std::to_string(log2_n)};
  stanza.body = chacha20_poly1305_seal(wrap_key(passphrase, salt, log2_n), kStanzaWrapNonce, file_key.view());
  return stanza;
}

ScryptStanzaParams parse_scrypt_stanza(const Stanza& stanza, const std::string& name) {
  const auto malformed = [&](const std::string& why) { return Error(name + ": malformed scrypt stanza (" + why + ")"); };
  if (stanza.args.size() != 2) throw malformed("it takes two arguments, it has " + std::to_string(stanza.args.size()));
  auto salt = decode_base64(stanza.args[0]);
  if (!salt || salt->size() != kSaltLen) throw malformed("its salt is not 16 bytes of canonical base64");
  const std::string& factor = stanza.args[1];
  unsigned value = 0;
  const auto [end, err] = std::from_chars(factor.data(), factor.data() + factor.size(), value);
  const bool decimal = std::all_of(factor.begin(), factor.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!decimal || err != std::errc() || end != factor.data() + factor.size() || factor[0] == '0' || value == 0) {
    throw malformed("its work factor is not a decimal number from 1 without leading zeros");
  }
  if (value > kMaxScryptWorkFactor) {
    throw Error(name + ": its passphrase's scrypt work factor is 2^" + factor + ", above the 2^" +
                std::to_string(kMaxScryptWorkFactor) + " (4 GiB of memory) paes and age accept");
  }
  if (stanza.body.size() != kFileKeyLen + kPoly1305TagLen) {
    throw malformed("its body is " + std::to_string(stanza.body.size()) + " bytes, not 32");
  }
  return {std::move(*salt), static_cast<std::uint8_t>(value)};
}

std::optional<SecretBytes> unwrap_scrypt(const Stanza& stanza, const SecretBytes& passphrase, const std::string& name) {
  const ScryptStanzaParams params = parse_scrypt_stanza(stanza, name);
  return chacha20_poly1305_open(wrap_key(passphrase, params.salt, params.log2_n), kStanzaWrapNonce, stanza.body);
}

void check_scrypt_stands_alone(const std::vector<Stanza>& stanzas, const std::string& name) {
  const bool has_scrypt =
      std::any_of(stanzas.begin(), stanzas.end(), [](const Stanza& s) { return s.type == kScryptStanzaType; });
  if (has_scrypt && stanzas.size() != 1) {
    throw Error(name + ": malformed header (a scrypt stanza with other stanzas: a passphrase stanza stands alone, "
                "as age.md requires)");
  }
}

}  // namespace paes
