// The text of age's keys, which files sealed to recipients use (the types are
// paes/recipient.hpp's): X25519 recipients are "age1..." (Bech32,
// human-readable part "age"), identities "AGE-SECRET-KEY-1..." (Bech32 in
// upper case); plugins' are "age1NAME1..." and "AGE-PLUGIN-NAME-1..." (C2SP
// age-plugin.md); ssh public keys are authorized_keys lines, ssh identities
// OpenSSH's private key files. Identity files are what age-keygen writes
// (comment lines starting with '#', blank lines, one identity a line), or an
// ssh private key file. Keys made by age-keygen and ssh-keygen work here, and
// the reverse.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "paes/recipient.hpp"
#include "paes/secret.hpp"
#include "paes/x25519_key.hpp"

namespace paes {

// Bounds on what is read as a file of recipients or identities: a file of
// ~16,000 recipients, and one line (a recipient is 62 characters; a plugin's
// or an ssh key's longer). /dev/zero given as a file ends at the bound.
inline constexpr std::size_t kMaxRecipientsFileLen = std::size_t{1} << 20;
inline constexpr std::size_t kMaxKeyLineLen = 16 * 1024;
inline constexpr std::size_t kMaxIdentityFileLen = 64 * 1024;

// A new X25519 identity (private key, 32 random bytes).
SecretBytes x25519_generate_identity();
// The public key (recipient) of an identity. Throws Error unless it is 32 bytes.
X25519PublicKey x25519_public_key(const SecretBytes& identity);

// "age1..." for a public key.
std::string format_age_recipient(const X25519PublicKey& key);
// "AGE-SECRET-KEY-1..." for an identity, in wiped memory.
SecretBytes format_age_identity(const SecretBytes& identity);
// An identity file as age-keygen writes it: "# created: <created>",
// "# public key: age1...", then the identity, each line ending in LF.
SecretBytes age_identity_file(const SecretBytes& identity, std::string_view created);

// The public key of an age X25519 recipient. Throws a usage Error naming
// `where` (never quoting the text, which may be a secret pasted in the wrong
// place) for what is not one: an identity, an ssh key or a plugin recipient,
// bad Bech32 or checksum, another length, and a key no owner could use: the
// top bit set, a value of 2^255 - 19 or more, or a low-order point (whose
// shared secret is zero).
X25519PublicKey parse_age_recipient(std::string_view text, const std::string& where);

// A recipient as its owner would give it: "age1..." for X25519, an ssh key's
// "ssh-ed25519 AAAA..." line (without a comment), a plugin's "age1NAME1...".
// Throws Error for a plugin identity, whose recipient only its plugin knows.
std::string format_recipient(const Recipient& recipient);

// True for a plugin name age-plugin.md allows: 1*(ALPHA / DIGIT / "-" / "_"
// / "." / "+"), so that "age-plugin-NAME" is a file name and never a path.
bool valid_plugin_name(std::string_view name);

// Any recipient: "age1..." (X25519), "age1NAME1..." (a plugin's),
// "ssh-ed25519 ..." or "ssh-rsa ..." (an authorized_keys line without
// options). Throws a usage Error as parse_age_recipient, and for an ssh key
// of another type, an RSA key under 2048 or over 16384 bits, or a plugin
// name age-plugin.md doesn't allow.
Recipient parse_recipient(std::string_view text, const std::string& where);

// The recipients of a recipients file's text (`name` names it in errors):
// one a line, blank lines and lines starting with '#' ignored, surrounding
// spaces trimmed. An ssh key of a type age doesn't encrypt to (ecdsa, sk-,
// dss) is skipped with a warning (paes/notice.hpp), as age does. Throws a
// usage Error as parse_recipient (with the line number), for a line longer
// than kMaxKeyLineLen, text longer than kMaxRecipientsFileLen, or no
// recipient at all.
std::vector<Recipient> parse_recipients_file(std::span<const std::uint8_t> text, const std::string& name);

// The identities of an identity file: the X25519 and plugin identities of
// a file as age-keygen (or a plugin) writes it, or the one key of an ssh
// private key file (`public_key_file`: the text of NAME.pub where the caller
// found one, which only a passphrase-protected PEM key needs). Throws Error
// naming the file and line, never quoting them: for a line that is no
// identity (a recipient, a passphrase-encrypted age identity file: named as
// not supported), or no identity at all.
std::vector<Identity> parse_identity_file(const SecretBytes& text, const std::string& name,
                                          const std::optional<std::string>& public_key_file = std::nullopt);

}  // namespace paes
