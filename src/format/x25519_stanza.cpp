#include "format/x25519_stanza.hpp"

#include <array>
#include <cstring>

#include "cipher/kdf.hpp"
#include "cipher/x25519.hpp"
#include "paes/error.hpp"
#include "util/base64.hpp"

namespace paes {
namespace {

constexpr std::string_view kWrapInfo = "age-encryption.org/v1/X25519";

}  // namespace

SecretBytes x25519_wrap_key(const SecretBytes& shared, const X25519PublicKey& ephemeral,
                            const X25519PublicKey& recipient, std::string_view info) {
  std::array<std::uint8_t, 2 * kX25519KeyLen> salt{};
  std::memcpy(salt.data(), ephemeral.data(), kX25519KeyLen);
  std::memcpy(salt.data() + kX25519KeyLen, recipient.data(), kX25519KeyLen);
  const auto* info_bytes = reinterpret_cast<const std::uint8_t*>(info.data());
  return hkdf_sha256(shared, salt, {info_bytes, info.size()}, 32);
}

Stanza wrap_x25519(const SecretBytes& file_key, const X25519PublicKey& recipient) {
  if (file_key.size() != kFileKeyLen) throw Error("internal: a file key is 16 bytes");
  SecretBytes ephemeral_secret(kX25519KeyLen);
  random_bytes({ephemeral_secret.data(), ephemeral_secret.size()});
  const X25519PrivateKey ephemeral(ephemeral_secret);
  const SecretBytes key =
      x25519_wrap_key(ephemeral.shared_secret(recipient), ephemeral.public_key(), recipient, kWrapInfo);
  Stanza stanza;
  stanza.type = kX25519StanzaType;
  stanza.args.push_back(encode_base64(ephemeral.public_key()));
  stanza.body = chacha20_poly1305_seal(key, kStanzaWrapNonce, file_key.view());
  return stanza;
}

std::optional<SecretBytes> unwrap_x25519(const Stanza& stanza, const X25519PrivateKey& identity,
                                         const std::string& name) {
  const auto malformed = [&](const std::string& why) { return Error(name + ": malformed X25519 stanza (" + why + ")"); };
  if (stanza.args.size() != 1) throw malformed("it takes one argument, it has " + std::to_string(stanza.args.size()));
  const auto share = decode_base64(stanza.args[0]);
  if (!share || share->size() != kX25519KeyLen) throw malformed("its share is not 32 bytes of canonical base64");
  if (stanza.body.size() != kFileKeyLen + kPoly1305TagLen) {
    throw malformed("its body is " + std::to_string(stanza.body.size()) + " bytes, not 32");
  }
  X25519PublicKey ephemeral{};
  std::memcpy(ephemeral.data(), share->data(), kX25519KeyLen);
  SecretBytes shared;
  try {
    shared = identity.shared_secret(ephemeral);
  } catch (const Error&) {
    throw malformed("its share is a low-order point");
  }
  const SecretBytes key = x25519_wrap_key(shared, ephemeral, identity.public_key(), kWrapInfo);
  return chacha20_poly1305_open(key, kStanzaWrapNonce, stanza.body);
}

}  // namespace paes
