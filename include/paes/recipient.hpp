// Who a file is sealed to, what opens it, and the person a key may need:
// every recipient and identity type age users hold.
//
//   age's X25519        age1...               AGE-SECRET-KEY-1...
//   ssh keys, as age    ssh-ed25519 / ssh-rsa  OpenSSH private key files
//   age plugins         age1NAME1...          AGE-PLUGIN-NAME-1...
//
// A plugin is the program age-plugin-NAME on PATH, run over C2SP
// age-plugin.md's state machines (hardware keys, post-quantum recipients).
// The text forms are read by paes/age_keys.hpp; the stanzas each type writes
// are age's own, so a file's recipients open it in age and in paes alike.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "paes/secret.hpp"
#include "paes/x25519_key.hpp"

namespace paes {

enum class KeyType { x25519, ssh_ed25519, ssh_rsa, plugin };

// A recipient: a public key (X25519, an ssh key in its wire encoding) or a
// plugin's recipient string, or, for sealing to an identity as age -e -i
// does, a plugin identity (which only its plugin can turn into stanzas).
class Recipient {
 public:
  Recipient(const X25519PublicKey& key);  // NOLINT(google-explicit-constructor): age's own type
  static Recipient ssh(KeyType type, std::vector<std::uint8_t> wire);
  static Recipient plugin(std::string recipient, std::string plugin_name);
  static Recipient plugin_identity(const SecretBytes& identity, std::string plugin_name);

  KeyType type() const { return type_; }
  const X25519PublicKey& x25519() const { return x25519_; }
  const std::vector<std::uint8_t>& ssh_wire() const { return ssh_wire_; }
  const std::string& plugin_name() const { return plugin_name_; }
  // The plugin's recipient string, empty for a plugin identity.
  const std::string& plugin_recipient() const { return plugin_recipient_; }
  // The plugin identity this recipient stands for (sealing to an identity), or null.
  const SecretBytes* plugin_identity() const { return plugin_identity_.get(); }
  bool operator==(const Recipient& other) const;

 private:
  Recipient() = default;
  KeyType type_ = KeyType::x25519;
  X25519PublicKey x25519_{};
  std::vector<std::uint8_t> ssh_wire_;
  std::string plugin_name_;
  std::string plugin_recipient_;
  std::shared_ptr<const SecretBytes> plugin_identity_;  // shared: recipients are values, copied into specs
};

// An identity: what opens the stanzas of one recipient type. An ssh key
// whose file is passphrase-protected holds the file's text, decrypted only
// when one of a header's stanzas names its public key (the passphrase asked
// through KeyUi then, never before).
class Identity {
 public:
  Identity(SecretBytes x25519_private_key);  // NOLINT(google-explicit-constructor): age's own type
  // `secret`: an Ed25519 key's 64 bytes (seed || public), an RSA key as PKCS#8 DER.
  static Identity ssh(KeyType type, std::vector<std::uint8_t> public_wire, SecretBytes secret);
  // A passphrase-protected ssh key: the key file's text, and its name for the prompt.
  static Identity encrypted_ssh(KeyType type, std::vector<std::uint8_t> public_wire, SecretBytes key_file,
                                std::string file_name);
  static Identity plugin(SecretBytes identity, std::string plugin_name);

  KeyType type() const { return type_; }
  // The X25519 private key, the ssh key, the encrypted key file, or the
  // plugin's identity string.
  const SecretBytes& secret() const { return secret_; }
  bool encrypted() const { return encrypted_; }
  const std::vector<std::uint8_t>& ssh_public_wire() const { return ssh_public_wire_; }
  const std::string& plugin_name() const { return plugin_name_; }
  const std::string& file_name() const { return file_name_; }
  Identity clone() const;
  // What sealing to this identity wraps to (age -e -i).
  Recipient recipient() const;

 private:
  Identity() = default;
  KeyType type_ = KeyType::x25519;
  SecretBytes secret_;
  bool encrypted_ = false;
  std::vector<std::uint8_t> ssh_public_wire_;
  std::string plugin_name_;
  std::string file_name_;
};

// The person at the keyboard, as keys need them: a plugin's messages and
// requests (age-plugin.md's msg, confirm, request-public, request-secret),
// an encrypted ssh key's passphrase. `from` names who asks ("age-plugin-NAME",
// or the key file). Texts come from plugins, which are not trusted: an
// implementation shows them without their control characters. A request
// that can't be answered (no terminal) returns nothing, which the plugin or
// key then treats as refused. Without a KeyUi (a library caller with nobody
// to ask) every request is refused and messages are dropped.
class KeyUi {
 public:
  // What request_secret is asked for an encrypted ssh key's passphrase (from:
  // the key file), the same for every file the key opens.
  static constexpr std::string_view kSshPassphraseQuestion = "passphrase of this ssh key:";
  virtual ~KeyUi() = default;
  virtual void message(const std::string& from, std::string_view text) = 0;
  // True for `yes`, false for `no`; nothing when nobody can answer.
  virtual std::optional<bool> confirm(const std::string& from, std::string_view text, std::string_view yes,
                                      std::string_view no) = 0;
  virtual std::optional<std::string> request_public(const std::string& from, std::string_view text) = 0;
  virtual std::optional<SecretBytes> request_secret(const std::string& from, std::string_view text) = 0;
};

}  // namespace paes
