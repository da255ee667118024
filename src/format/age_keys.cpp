// age's keys and the files that hold them (include/paes/age_keys.hpp).
#include "paes/age_keys.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "cipher/x25519.hpp"
#include "format/ssh_keys.hpp"
#include "paes/error.hpp"
#include "paes/notice.hpp"
#include "util/bech32.hpp"
#include "util/text.hpp"

namespace paes {
namespace {

constexpr std::string_view kRecipientHrp = "age";
constexpr std::string_view kIdentityHrp = "age-secret-key-";
constexpr std::string_view kIdentityPrefix = "AGE-SECRET-KEY-1";
constexpr std::string_view kPluginIdentityPrefix = "AGE-PLUGIN-";
// paes' unreleased version-2 keys: named, so a user who made one knows why.
constexpr std::string_view kPreReleaseRecipientPrefix = "paes-x25519:";
constexpr std::string_view kPreReleaseIdentityPrefix = "paes-x25519-secret:";

bool starts_with_ignoring_case(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), text.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
         });
}

// Calls `each(line, number)` for the lines of `text` that are neither blank
// nor comments, trimmed; a line longer than kMaxKeyLineLen is refused.
template <typename Each>
void for_each_key_line(std::string_view text, const std::string& name, Each&& each) {
  std::size_t number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view raw = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++number;
    if (raw.size() > kMaxKeyLineLen) {
      throw usage_error(name + ", line " + std::to_string(number) + ": longer than " + std::to_string(kMaxKeyLineLen) +
                        " bytes, which no key is");
    }
    const std::string_view line = trimmed(raw);
    if (line.empty() || line.front() == '#') continue;
    each(line, number);
  }
}

// The top bit is not part of an X25519 u-coordinate (RFC 7748 masks it), and
// values from p = 2^255 - 19 up alias smaller ones: no key of age or paes is
// written so, and a recipient so written is a mistake or a probe.
bool canonical_u_coordinate(const X25519PublicKey& key) {
  if (key[31] & 0x80) return false;
  if (key[31] != 0x7f || key[0] < 0xed) return true;
  return !std::all_of(key.begin() + 1, key.begin() + 31, [](std::uint8_t b) { return b == 0xff; });
}

KeyType ssh_key_type(SshKeyType type) { return type == SshKeyType::ed25519 ? KeyType::ssh_ed25519 : KeyType::ssh_rsa; }

// A plugin's recipient ("age1NAME1...") or identity ("AGE-PLUGIN-NAME-1..."):
// its plugin's name, from the Bech32 human-readable part. Throws a usage
// Error for a name age-plugin.md doesn't allow.
std::string plugin_name_of(std::string_view hrp, std::string_view prefix, std::string_view suffix,
                           const std::string& where) {
  const bool framed = hrp.size() >= prefix.size() + suffix.size() && hrp.starts_with(prefix) && hrp.ends_with(suffix);
  std::string name(framed ? hrp.substr(prefix.size(), hrp.size() - prefix.size() - suffix.size()) : "");
  if (!valid_plugin_name(name)) {
    throw usage_error(where + " names an age plugin whose name is not one age-plugin.md allows (letters, digits, "
                      "'-', '_', '.', '+')");
  }
  std::transform(name.begin(), name.end(), name.begin(),
                 [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
  return name;
}

}  // namespace

Recipient::Recipient(const X25519PublicKey& key) : x25519_(key) {}

Recipient Recipient::ssh(KeyType type, std::vector<std::uint8_t> wire) {
  Recipient recipient;
  recipient.type_ = type;
  recipient.ssh_wire_ = std::move(wire);
  return recipient;
}

Recipient Recipient::plugin(std::string text, std::string plugin_name) {
  Recipient recipient;
  recipient.type_ = KeyType::plugin;
  recipient.plugin_recipient_ = std::move(text);
  recipient.plugin_name_ = std::move(plugin_name);
  return recipient;
}

Recipient Recipient::plugin_identity(const SecretBytes& identity, std::string plugin_name) {
  Recipient recipient;
  recipient.type_ = KeyType::plugin;
  recipient.plugin_identity_ = std::make_shared<const SecretBytes>(identity.clone());
  recipient.plugin_name_ = std::move(plugin_name);
  return recipient;
}

bool Recipient::operator==(const Recipient& other) const {
  const bool same_identity = (plugin_identity_ == nullptr) == (other.plugin_identity_ == nullptr) &&
                             (plugin_identity_ == nullptr ||
                              std::ranges::equal(plugin_identity_->view(), other.plugin_identity_->view()));
  return type_ == other.type_ && x25519_ == other.x25519_ && ssh_wire_ == other.ssh_wire_ &&
         plugin_name_ == other.plugin_name_ && plugin_recipient_ == other.plugin_recipient_ && same_identity;
}

Identity::Identity(SecretBytes x25519_private_key) : secret_(std::move(x25519_private_key)) {}

Identity Identity::ssh(KeyType type, std::vector<std::uint8_t> public_wire, SecretBytes secret) {
  Identity identity;
  identity.type_ = type;
  identity.ssh_public_wire_ = std::move(public_wire);
  identity.secret_ = std::move(secret);
  return identity;
}

Identity Identity::encrypted_ssh(KeyType type, std::vector<std::uint8_t> public_wire, SecretBytes key_file,
                                 std::string file_name) {
  Identity identity = ssh(type, std::move(public_wire), std::move(key_file));
  identity.encrypted_ = true;
  identity.file_name_ = std::move(file_name);
  return identity;
}

Identity Identity::plugin(SecretBytes text, std::string plugin_name) {
  Identity identity;
  identity.type_ = KeyType::plugin;
  identity.secret_ = std::move(text);
  identity.plugin_name_ = std::move(plugin_name);
  return identity;
}

Identity Identity::clone() const {
  Identity copy;
  copy.type_ = type_;
  copy.secret_ = secret_.clone();
  copy.encrypted_ = encrypted_;
  copy.ssh_public_wire_ = ssh_public_wire_;
  copy.plugin_name_ = plugin_name_;
  copy.file_name_ = file_name_;
  return copy;
}

Recipient Identity::recipient() const {
  switch (type_) {
    case KeyType::x25519: return Recipient(x25519_public_of(secret_));
    case KeyType::ssh_ed25519:
    case KeyType::ssh_rsa: return Recipient::ssh(type_, ssh_public_wire_);
    case KeyType::plugin: break;
  }
  return Recipient::plugin_identity(secret_, plugin_name_);
}

std::string format_recipient(const Recipient& recipient) {
  switch (recipient.type()) {
    case KeyType::x25519: return format_age_recipient(recipient.x25519());
    case KeyType::ssh_ed25519:
    case KeyType::ssh_rsa:
      return ssh_public_key_line(
          {recipient.type() == KeyType::ssh_ed25519 ? SshKeyType::ed25519 : SshKeyType::rsa, recipient.ssh_wire()});
    case KeyType::plugin: break;
  }
  if (recipient.plugin_identity() != nullptr) throw Error("internal: a plugin identity's recipient is its plugin's");
  return recipient.plugin_recipient();
}

bool valid_plugin_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '+';
  });
}

SecretBytes x25519_generate_identity() {
  SecretBytes key(kX25519KeyLen);
  random_bytes({key.data(), key.size()});
  return key;
}

X25519PublicKey x25519_public_key(const SecretBytes& identity) { return x25519_public_of(identity); }

std::string format_age_recipient(const X25519PublicKey& key) {
  const SecretBytes text = bech32_encode(kRecipientHrp, key, false);
  return {reinterpret_cast<const char*>(text.data()), text.size()};
}

SecretBytes format_age_identity(const SecretBytes& identity) {
  if (identity.size() != kX25519KeyLen) throw Error("internal: an X25519 identity is 32 bytes");
  return bech32_encode(kIdentityHrp, identity.view(), true);
}

SecretBytes age_identity_file(const SecretBytes& identity, std::string_view created) {
  const std::string head = "# created: " + std::string(created) + "\n# public key: " +
                           format_age_recipient(x25519_public_key(identity)) + "\n";
  const SecretBytes line = format_age_identity(identity);
  SecretBytes text(head.size() + line.size() + 1);
  std::memcpy(text.data(), head.data(), head.size());
  std::memcpy(text.data() + head.size(), line.data(), line.size());
  text.data()[text.size() - 1] = '\n';
  return text;
}

X25519PublicKey parse_age_recipient(std::string_view text, const std::string& where) {
  const auto refuse = [&](const std::string& why) { return usage_error(where + " " + why); };
  if (starts_with_ignoring_case(text, kIdentityPrefix) || text.starts_with(kPreReleaseIdentityPrefix)) {
    throw refuse("is an identity, a secret key, not a recipient: encrypt to its public age1... recipient");
  }
  if (text.starts_with("ssh-")) throw refuse("is an ssh public key, not an age1... recipient");
  if (text.starts_with(kPreReleaseRecipientPrefix)) {
    throw refuse("is a recipient of paes' unreleased version-2 format: make an age identity and use its age1... recipient");
  }
  const auto decoded = bech32_decode(text);
  if (!decoded) {
    throw refuse("is not an age recipient: expected age1 and 58 Bech32 characters, as age-keygen prints (" +
                 std::to_string(text.size()) + " characters given, or a character or checksum is wrong)");
  }
  if (decoded->hrp.starts_with("age1")) throw refuse("is an age plugin recipient, not an X25519 one");
  // Bech32 allows all upper case; age takes recipients in lower case only,
  // and a key one tool takes and the other refuses helps nobody.
  if (std::any_of(text.begin(), text.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)); })) {
    throw refuse("is in upper case: age recipients are written in lower case (age1...), as age-keygen prints");
  }
  if (decoded->hrp != kRecipientHrp) throw refuse("is Bech32 but not an age recipient (it does not start with age1)");
  if (decoded->data.size() != kX25519KeyLen) {
    throw refuse("is not an X25519 recipient: it holds " + std::to_string(decoded->data.size()) + " bytes, not 32");
  }
  X25519PublicKey key{};
  std::memcpy(key.data(), decoded->data.data(), key.size());
  if (!canonical_u_coordinate(key)) {
    throw refuse("is not a canonical X25519 public key (its top bit is set, or it is 2^255 - 19 or more)");
  }
  if (is_low_order_point(key)) {
    throw refuse("is a low-order X25519 point: its shared secret is zero, so anybody could open the file");
  }
  return key;
}

Recipient parse_recipient(std::string_view text, const std::string& where) {
  if (looks_like_ssh_public_key(text)) {
    const SshPublicKeyLine line = parse_ssh_public_key_line(text, where);
    if (!line.key) {
      throw usage_error(where + " is an ssh key of type " + line.unsupported_type +
                        ", which age's ssh recipients are not: use an ssh-ed25519 or ssh-rsa key");
    }
    return Recipient::ssh(ssh_key_type(line.key->type), line.key->wire);
  }
  // A plugin's recipient has its name between "age1" and Bech32's separator,
  // the last '1' (age tells the two apart the same way).
  if (text.starts_with("age1") && std::count(text.begin(), text.end(), '1') > 1) {
    const auto decoded = bech32_decode(text);
    if (!decoded) {
      throw usage_error(where + " is not an age plugin recipient: a character or its checksum is wrong");
    }
    if (std::any_of(text.begin(), text.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)); })) {
      throw usage_error(where + " is in upper case: age recipients are written in lower case");
    }
    return Recipient::plugin(std::string(text), plugin_name_of(decoded->hrp, "age1", "", where));
  }
  return Recipient(parse_age_recipient(text, where));
}

std::vector<Recipient> parse_recipients_file(std::span<const std::uint8_t> text, const std::string& name) {
  if (text.size() > kMaxRecipientsFileLen) {
    throw usage_error(name + " is larger than " + std::to_string(kMaxRecipientsFileLen >> 20) +
                      " MiB, more than any list of recipients");
  }
  std::vector<Recipient> keys;
  for_each_key_line({reinterpret_cast<const char*>(text.data()), text.size()}, name,
                    [&](std::string_view line, std::size_t number) {
                      const std::string where = name + ", line " + std::to_string(number) + ",";
                      if (looks_like_ssh_public_key(line)) {
                        const SshPublicKeyLine ssh = parse_ssh_public_key_line(line, where);
                        if (!ssh.key) {
                          // A user's authorized_keys holds keys of every type;
                          // age skips those it can't encrypt to, and so does paes.
                          notify(NoticeLevel::warning, where + " an ssh key of type " + ssh.unsupported_type +
                                                           ", which age does not encrypt to: skipped");
                          return;
                        }
                      }
                      keys.push_back(parse_recipient(line, where));
                    });
  if (keys.empty()) throw usage_error(name + " holds no recipient");
  return keys;
}

std::vector<Identity> parse_identity_file(const SecretBytes& text, const std::string& name,
                                          const std::optional<std::string>& public_key_file) {
  if (text.size() > kMaxIdentityFileLen) {
    throw usage_error(name + " is larger than " + std::to_string(kMaxIdentityFileLen >> 10) +
                      " KiB, more than an identity file");
  }
  const std::string_view all(reinterpret_cast<const char*>(text.data()), text.size());
  if (all.starts_with("age-encryption.org/") || all.starts_with("-----BEGIN AGE ENCRYPTED FILE-----")) {
    // The caller opens one first (paes/sealed.hpp's open_age_bytes, with its passphrase).
    throw usage_error(name + " is an age-encrypted (passphrase-protected) identity file: decrypt it first");
  }
  std::vector<Identity> identities;
  if (looks_like_ssh_private_key(text.view())) {
    SshIdentityFile ssh = read_ssh_identity(text, name, public_key_file);
    const KeyType type = ssh_key_type(ssh.public_key.type);
    if (ssh.key) {
      identities.push_back(Identity::ssh(type, std::move(ssh.public_key.wire), std::move(ssh.key->secret)));
    } else {
      identities.push_back(Identity::encrypted_ssh(type, std::move(ssh.public_key.wire), text.clone(), name));
    }
    return identities;
  }
  if (all.starts_with("ssh-")) {
    throw usage_error(name + " is an ssh public key: decrypting takes the private key file (without .pub)");
  }
  for_each_key_line(all, name, [&](std::string_view line, std::size_t number) {
    // The line is secret: errors name its number, never its text.
    const std::string where = name + ", line " + std::to_string(number);
    if (starts_with_ignoring_case(line, "age1")) {
      // A file in the wrong role: the caller's mistake, not the data's.
      throw usage_error(where + " is a recipient (a public key, for encrypting): decrypting takes the identity "
                        "(AGE-SECRET-KEY-1...)");
    }
    if (line.starts_with(kPreReleaseIdentityPrefix)) {
      throw usage_error(where + ": an identity of paes' unreleased version-2 format, which version 3 doesn't read");
    }
    auto decoded = bech32_decode(line);
    // In upper case only, as age reads identities.
    const bool upper = std::none_of(line.begin(), line.end(), [](char c) { return std::islower(static_cast<unsigned char>(c)); });
    if (decoded && upper && line.starts_with(kPluginIdentityPrefix)) {
      const std::string plugin = plugin_name_of(decoded->hrp, "age-plugin-", "-", where);
      const auto* bytes = reinterpret_cast<const std::uint8_t*>(line.data());
      identities.push_back(Identity::plugin(SecretBytes(bytes, line.size()), plugin));
      return;
    }
    if (!decoded || !upper || decoded->hrp != kIdentityHrp || decoded->data.size() != kX25519KeyLen) {
      throw usage_error(where + ": not an age identity (AGE-SECRET-KEY-1 and 59 Bech32 characters, as age-keygen "
                        "writes, or a plugin's AGE-PLUGIN-...)");
    }
    identities.push_back(Identity(std::move(decoded->data)));
  });
  if (identities.empty()) throw usage_error(name + " holds no identity");
  return identities;
}

}  // namespace paes
