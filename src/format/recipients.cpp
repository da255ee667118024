#include "format/recipients.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "cipher/kdf.hpp"
#include "cipher/openssl/evp.hpp"
#include "paes/error.hpp"
#include "util/hex.hpp"

namespace paes {
namespace {

constexpr std::size_t kGcmTagLen = 16;
constexpr std::string_view kWrapInfo = "paes x25519 file key v2";

// OpenSSL keeps its copy of a raw private key in its secure heap and clears it
// when the EVP_PKEY is freed, so the key stays out of ordinary memory.
EvpPkeyPtr private_pkey(const SecretBytes& key) {
  if (key.size() != kX25519KeyLen) {
    throw Error("an X25519 identity is 32 bytes, this one has " + std::to_string(key.size()));
  }
  EvpPkeyPtr pkey(EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nullptr, key.data(), key.size()));
  if (!pkey) throw_openssl_error("X25519 is not available");
  return pkey;
}

X25519PublicKey public_of(EVP_PKEY* pkey) {
  X25519PublicKey out{};
  std::size_t len = out.size();
  if (EVP_PKEY_get_raw_public_key(pkey, out.data(), &len) != 1 || len != out.size()) {
    throw_openssl_error("X25519 public key");
  }
  return out;
}

// X25519(private, peer). A peer key of low order gives the all-zero secret,
// which any attacker can predict: refused (OpenSSL refuses it too).
SecretBytes shared_secret(EVP_PKEY* private_key, const X25519PublicKey& peer) {
  const EvpPkeyPtr peer_key(EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nullptr, peer.data(), peer.size()));
  if (!peer_key) throw_openssl_error("X25519 public key");
  const EvpPkeyCtxPtr ctx(EVP_PKEY_CTX_new(private_key, nullptr));
  if (!ctx) throw_openssl_error("out of memory for X25519");
  SecretBytes shared(kX25519KeyLen);
  std::size_t len = shared.size();
  if (EVP_PKEY_derive_init(ctx.get()) != 1 || EVP_PKEY_derive_set_peer(ctx.get(), peer_key.get()) != 1 ||
      EVP_PKEY_derive(ctx.get(), shared.data(), &len) != 1 || len != shared.size() ||
      std::all_of(shared.data(), shared.data() + len, [](std::uint8_t b) { return b == 0; })) {
    throw Error("X25519 key agreement failed: a low-order (all-zero secret) public key");
  }
  return shared;
}

// HKDF-SHA256(shared, salt = ephemeral || recipient, info), as age's stanza.
SecretBytes wrap_key(const SecretBytes& shared, const X25519PublicKey& ephemeral,
                     const X25519PublicKey& recipient) {
  std::array<std::uint8_t, 2 * kX25519KeyLen> salt{};
  std::memcpy(salt.data(), ephemeral.data(), kX25519KeyLen);
  std::memcpy(salt.data() + kX25519KeyLen, recipient.data(), kX25519KeyLen);
  const auto* info = reinterpret_cast<const std::uint8_t*>(kWrapInfo.data());
  return hkdf_sha256(shared, salt, {info, kWrapInfo.size()}, kFileKeyLen);
}

// AES-256-GCM with the zero nonce: each wrap key is used for one message only
// (the ephemeral key is fresh), so the nonce never repeats under a key.
EvpCtxPtr gcm_ctx(const SecretBytes& key, Direction direction) {
  const EvpCipherPtr cipher(EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr));
  if (!cipher) throw_openssl_error("AES-GCM is not available");
  const std::uint8_t nonce[12] = {};
  return make_aes_ctx(cipher.get(), key, nonce, direction, false);
}

}  // namespace

SecretBytes x25519_generate_identity() {
  SecretBytes key(kX25519KeyLen);
  random_bytes({key.data(), key.size()});
  return key;
}

X25519PublicKey x25519_public_key(const SecretBytes& identity) {
  return public_of(private_pkey(identity).get());
}

std::vector<std::uint8_t> RecipientsBlock::encode() const {
  std::vector<std::uint8_t> out;
  out.reserve(length(stanzas.size()));
  out.push_back(static_cast<std::uint8_t>(stanzas.size()));
  for (const Stanza& s : stanzas) {
    out.insert(out.end(), s.ephemeral.begin(), s.ephemeral.end());
    out.insert(out.end(), s.wrapped.begin(), s.wrapped.end());
  }
  return out;
}

RecipientsBlock RecipientsBlock::decode(std::span<const std::uint8_t> bytes, const std::string& name) {
  if (bytes.empty()) throw Error(name + ": truncated recipients block");
  const std::size_t count = bytes[0];
  if (count == 0) throw Error(name + ": corrupt recipients block (no recipients)");
  if (bytes.size() < length(count)) throw Error(name + ": truncated recipients block");
  RecipientsBlock block;
  block.stanzas.resize(count);
  const std::uint8_t* p = bytes.data() + 1;
  for (Stanza& s : block.stanzas) {
    std::memcpy(s.ephemeral.data(), p, kX25519KeyLen);
    std::memcpy(s.wrapped.data(), p + kX25519KeyLen, s.wrapped.size());
    p += kStanzaLen;
  }
  return block;
}

Stanza wrap_file_key(const SecretBytes& file_key, const X25519PublicKey& recipient) {
  if (file_key.size() != kFileKeyLen) throw Error("internal: a file key is 32 bytes");
  const SecretBytes ephemeral_key = x25519_generate_identity();
  const EvpPkeyPtr ephemeral = private_pkey(ephemeral_key);
  Stanza stanza;
  stanza.ephemeral = public_of(ephemeral.get());
  const SecretBytes key = wrap_key(shared_secret(ephemeral.get(), recipient), stanza.ephemeral, recipient);
  const EvpCtxPtr ctx = gcm_ctx(key, Direction::encrypt);
  std::uint8_t* out = stanza.wrapped.data();
  evp_update(ctx.get(), out, file_key.data(), kFileKeyLen);
  int final_len = 0;
  if (EVP_CipherFinal_ex(ctx.get(), out + kFileKeyLen, &final_len) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, kGcmTagLen, out + kFileKeyLen) != 1) {
    throw_openssl_error("wrapping the file key failed");
  }
  return stanza;
}

std::optional<SecretBytes> unwrap_file_key(const Stanza& stanza, const SecretBytes& identity,
                                           const X25519PublicKey& identity_public) {
  const EvpPkeyPtr own = private_pkey(identity);
  const SecretBytes key = wrap_key(shared_secret(own.get(), stanza.ephemeral), stanza.ephemeral, identity_public);
  const EvpCtxPtr ctx = gcm_ctx(key, Direction::decrypt);
  SecretBytes file_key(kFileKeyLen);
  evp_update(ctx.get(), file_key.data(), stanza.wrapped.data(), kFileKeyLen);
  std::array<std::uint8_t, kGcmTagLen> tag{};
  std::memcpy(tag.data(), stanza.wrapped.data() + kFileKeyLen, kGcmTagLen);
  std::uint8_t none[16];
  int final_len = 0;
  if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG, kGcmTagLen, tag.data()) != 1 ||
      EVP_CipherFinal_ex(ctx.get(), none, &final_len) != 1) {
    return std::nullopt;  // another recipient's stanza (or a damaged one)
  }
  return file_key;
}

std::string format_recipient(const X25519PublicKey& key) {
  return std::string(kRecipientPrefix) + encode_hex(key);
}

std::optional<X25519PublicKey> parse_recipient(std::string_view text) {
  if (text.substr(0, kRecipientPrefix.size()) != kRecipientPrefix) return std::nullopt;
  text.remove_prefix(kRecipientPrefix.size());
  if (text.size() != 2 * kX25519KeyLen) return std::nullopt;
  const auto bytes = decode_hex(text);
  if (!bytes || bytes->size() != kX25519KeyLen) return std::nullopt;
  X25519PublicKey key{};
  std::memcpy(key.data(), bytes->data(), kX25519KeyLen);
  return key;
}

}  // namespace paes
