// age's two ssh recipient stanzas (age 1.1.1's agessh package; not in
// C2SP age.md), computed exactly as age computes them, so that an ssh key
// opens age's files and paes' alike. TAG is ssh_key_tag (format/ssh_keys.hpp):
//
//   -> ssh-ed25519 TAG base64(E)      E: a fresh ephemeral X25519 share
//   base64(ChaCha20-Poly1305(wrap key, nonce = 12 zero bytes, file key))
//
//   R     = the recipient's Ed25519 key as an X25519 key
//   tweak = HKDF-SHA-256(ikm = empty, salt = the key's ssh wire encoding,
//                        info = "age-encryption.org/v1/ssh-ed25519", 32)
//   wrap key = HKDF-SHA-256(ikm = X25519(tweak, X25519(e, R)), salt = E || R,
//                           info = "age-encryption.org/v1/ssh-ed25519", 32)
//
//   -> ssh-rsa TAG
//   base64(RSA-OAEP-SHA-256(label = "age-encryption.org/v1/ssh-rsa", file key))
//
// The tag is not anonymous: it names the key (to 32 bits) to whoever reads
// the header, as in age.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "format/ssh_keys.hpp"
#include "format/stanza_header.hpp"
#include "paes/secret.hpp"

namespace paes {

inline constexpr std::string_view kSshEd25519StanzaType = "ssh-ed25519";
inline constexpr std::string_view kSshRsaStanzaType = "ssh-rsa";

// The file key (kFileKeyLen bytes) wrapped to `recipient`.
Stanza wrap_ssh(const SecretBytes& file_key, const SshPublicKey& recipient);

// Whether `stanza` is for `key`: its type and tag (its first argument) are
// the key's. What decides, as in age, whether a passphrase-protected key's
// passphrase is asked for.
bool ssh_stanza_is_for(const Stanza& stanza, const SshPublicKey& key);

// The file key when `identity` opens `stanza`; nothing when the stanza is of
// another type or another key's tag. Throws Error ("<name>: malformed
// ssh-ed25519 stanza (...)") for arguments age refuses, and ("<name>: ...
// failed to decrypt the file key") when the tag is the identity's but the
// body doesn't open: the stanza says it is this key's, as age reasons.
std::optional<SecretBytes> unwrap_ssh(const Stanza& stanza, const SshPrivateKey& identity, const std::string& name);

}  // namespace paes
