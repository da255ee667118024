// age's X25519 recipient stanza (C2SP age.md, "The X25519 recipient type"),
// computed exactly as age computes it, so that one identity opens age's files
// and paes' alike:
//
//   -> X25519 base64(E)          E: a fresh ephemeral public key per stanza
//   base64(ChaCha20-Poly1305(wrap key, nonce = 12 zero bytes, file key))
//
//   wrap key = HKDF-SHA-256(ikm = X25519(e, R), salt = E || R,
//                           info = "age-encryption.org/v1/X25519", 32 bytes)
//
// The zero nonce is safe: every wrap key is new (e is), and seals one message.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cipher/x25519.hpp"
#include "format/stanza_header.hpp"
#include "paes/secret.hpp"
#include "paes/x25519_key.hpp"

namespace paes {

// The file key every stanza of a header wraps, as age's.
inline constexpr std::size_t kFileKeyLen = 16;
inline constexpr std::string_view kX25519StanzaType = "X25519";

// HKDF-SHA-256(ikm = shared, salt = ephemeral || recipient, info, 32): the
// wrap key of age's X25519 stanza (info "age-encryption.org/v1/X25519") and
// of its ssh-ed25519 stanza (format/ssh_stanza.hpp), which differ in `info`.
SecretBytes x25519_wrap_key(const SecretBytes& shared, const X25519PublicKey& ephemeral,
                            const X25519PublicKey& recipient, std::string_view info);

// The file key wrapped to `recipient` with a fresh ephemeral key. Throws Error
// for a low-order recipient.
Stanza wrap_x25519(const SecretBytes& file_key, const X25519PublicKey& recipient);

// The file key when `identity` opens `stanza`, an
// X25519 stanza; nothing when the stanza is another recipient's. Throws Error
// ("<name>: malformed X25519 stanza (...)") for one that age.md doesn't allow:
// not exactly one argument, a share that is not 32 bytes of canonical base64,
// a body that is not 32 bytes, or a low-order share.
std::optional<SecretBytes> unwrap_x25519(const Stanza& stanza, const X25519PrivateKey& identity,
                                         const std::string& name);

}  // namespace paes
