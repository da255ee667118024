#include "format/ssh_stanza.hpp"

#include "cipher/kdf.hpp"
#include "cipher/ssh_crypto.hpp"
#include "cipher/x25519.hpp"
#include "format/x25519_stanza.hpp"
#include "paes/error.hpp"
#include "util/base64.hpp"
#include "util/text.hpp"

namespace paes {
namespace {

constexpr std::string_view kEd25519Label = "age-encryption.org/v1/ssh-ed25519";
constexpr std::string_view kRsaLabel = "age-encryption.org/v1/ssh-rsa";

std::string_view stanza_type_of(SshKeyType type) {
  return type == SshKeyType::ed25519 ? kSshEd25519StanzaType : kSshRsaStanzaType;
}

// The wrap key of an ssh-ed25519 stanza, from one side's X25519 scalar and
// the other's public share (the ephemeral's and the recipient's, or the
// identity's and the stanza's). X25519 with the tweak, a scalar only the
// ssh key's owner can name, binds the shared secret to the whole ssh key.
SecretBytes ed25519_wrap_key(const X25519PrivateKey& scalar, const X25519PublicKey& peer, const SshPublicKey& ssh_key,
                             const X25519PublicKey& ephemeral, const X25519PublicKey& recipient) {
  const SecretBytes shared = scalar.shared_secret(peer);
  // age's HKDF of the tweak has no input key material: the ssh key is its salt.
  const SecretBytes tweak = hkdf_sha256(SecretBytes(), ssh_key.wire, as_bytes(kEd25519Label), kX25519KeyLen);
  X25519PublicKey shared_point{};
  std::copy(shared.data(), shared.data() + shared.size(), shared_point.begin());
  SecretBytes tweaked = x25519_shared_secret(tweak, shared_point);
  wipe(shared_point);
  return x25519_wrap_key(tweaked, ephemeral, recipient, kEd25519Label);
}

Stanza wrap_ed25519(const SecretBytes& file_key, const SshPublicKey& recipient) {
  const X25519PublicKey recipient_x25519 = ed25519_public_to_x25519(ssh_ed25519_public_key(recipient));
  SecretBytes ephemeral_secret(kX25519KeyLen);
  random_bytes({ephemeral_secret.data(), ephemeral_secret.size()});
  const X25519PrivateKey ephemeral(ephemeral_secret);
  const SecretBytes key =
      ed25519_wrap_key(ephemeral, recipient_x25519, recipient, ephemeral.public_key(), recipient_x25519);
  Stanza stanza;
  stanza.type = kSshEd25519StanzaType;
  stanza.args = {ssh_key_tag(recipient), encode_base64(ephemeral.public_key())};
  stanza.body = chacha20_poly1305_seal(key, kStanzaWrapNonce, file_key.view());
  return stanza;
}

Stanza wrap_rsa(const SecretBytes& file_key, const SshPublicKey& recipient) {
  Stanza stanza;
  stanza.type = kSshRsaStanzaType;
  stanza.args = {ssh_key_tag(recipient)};
  stanza.body = rsa_oaep_sha256_encrypt(ssh_rsa_public_numbers(recipient), kRsaLabel, file_key.view());
  return stanza;
}

Error malformed(const std::string& name, std::string_view type, const std::string& why) {
  return Error(name + ": malformed " + std::string(type) + " stanza (" + why + ")");
}

// The file key a stanza tagged for this identity opened: age's file key
// size, or an Error, since the tag said the stanza was this key's.
SecretBytes opened_file_key(std::optional<SecretBytes> file_key, const std::string& name, std::string_view type) {
  if (!file_key) {
    throw Error(name + ": the " + std::string(type) +
                " stanza tagged for this key failed to decrypt the file key: the header is damaged or forged");
  }
  if (file_key->size() != kFileKeyLen) {
    throw malformed(name, type, "its file key is " + std::to_string(file_key->size()) + " bytes, not 16");
  }
  return std::move(*file_key);
}

std::optional<SecretBytes> unwrap_ed25519(const Stanza& stanza, const SshPrivateKey& identity,
                                          const std::string& name) {
  if (stanza.args.size() != 2) {
    throw malformed(name, stanza.type, "it takes two arguments, it has " + std::to_string(stanza.args.size()));
  }
  const auto share = decode_base64(stanza.args[1]);
  if (!share || share->size() != kX25519KeyLen) {
    throw malformed(name, stanza.type, "its share is not 32 bytes of canonical base64");
  }
  if (stanza.args[0] != ssh_key_tag(identity.public_key)) return std::nullopt;
  X25519PublicKey ephemeral{};
  std::copy(share->begin(), share->end(), ephemeral.begin());
  // age's own X25519 public key is its scalar's, not the Ed25519 key's map.
  const X25519PrivateKey own(ed25519_secret_to_x25519(identity.secret));
  SecretBytes key;
  try {
    key = ed25519_wrap_key(own, ephemeral, identity.public_key, ephemeral, own.public_key());
  } catch (const Error&) {
    throw malformed(name, stanza.type, "its share is a low-order point");
  }
  if (stanza.body.size() != kFileKeyLen + kPoly1305TagLen) {
    throw malformed(name, stanza.type, "its body is " + std::to_string(stanza.body.size()) + " bytes, not 32");
  }
  return opened_file_key(chacha20_poly1305_open(key, kStanzaWrapNonce, stanza.body), name, stanza.type);
}

std::optional<SecretBytes> unwrap_rsa(const Stanza& stanza, const SshPrivateKey& identity, const std::string& name) {
  if (stanza.args.size() != 1) {
    throw malformed(name, stanza.type, "it takes one argument, it has " + std::to_string(stanza.args.size()));
  }
  if (stanza.args[0] != ssh_key_tag(identity.public_key)) return std::nullopt;
  return opened_file_key(rsa_oaep_sha256_decrypt(identity.secret, kRsaLabel, stanza.body), name, stanza.type);
}

}  // namespace

Stanza wrap_ssh(const SecretBytes& file_key, const SshPublicKey& recipient) {
  if (file_key.size() != kFileKeyLen) throw Error("internal: a file key is 16 bytes");
  return recipient.type == SshKeyType::ed25519 ? wrap_ed25519(file_key, recipient) : wrap_rsa(file_key, recipient);
}

bool ssh_stanza_is_for(const Stanza& stanza, const SshPublicKey& key) {
  return stanza.type == stanza_type_of(key.type) && !stanza.args.empty() && stanza.args[0] == ssh_key_tag(key);
}

std::optional<SecretBytes> unwrap_ssh(const Stanza& stanza, const SshPrivateKey& identity, const std::string& name) {
  if (stanza.type != stanza_type_of(identity.public_key.type)) return std::nullopt;
  return identity.public_key.type == SshKeyType::ed25519 ? unwrap_ed25519(stanza, identity, name)
                                                         : unwrap_rsa(stanza, identity, name);
}

}  // namespace paes
