#include "api/recipients.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "api/plugin_client.hpp"
#include "cipher/kdf.hpp"
#include "format/age_format.hpp"
#include "format/scrypt_stanza.hpp"
#include "format/ssh_keys.hpp"
#include "format/ssh_stanza.hpp"
#include "format/x25519_stanza.hpp"
#include "paes/age_keys.hpp"
#include "paes/error.hpp"
#include "paes/notice.hpp"
#include "util/printable.hpp"

namespace paes {
namespace {

SshPublicKey ssh_public_key(KeyType type, const std::vector<std::uint8_t>& wire) {
  return {type == KeyType::ssh_ed25519 ? SshKeyType::ed25519 : SshKeyType::rsa, wire};
}

// The identities of each plugin, in the order the plugins first appear.
template <typename Key>
std::vector<std::pair<std::string, std::vector<const Key*>>> by_plugin(const std::vector<Key>& keys) {
  std::vector<std::pair<std::string, std::vector<const Key*>>> groups;
  for (const Key& key : keys) {
    if (key.type() != KeyType::plugin) continue;
    auto group =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key.plugin_name(); });
    if (group == groups.end()) group = groups.insert(groups.end(), {key.plugin_name(), {}});
    group->second.push_back(&key);
  }
  return groups;
}

std::optional<SecretBytes> unwrap_natively(const Identity& identity, const SecretBytes& secret,
                                           const StanzaHeader& header, const std::string& name) {
  if (identity.type() == KeyType::x25519) {
    const X25519PrivateKey own(secret);
    for (const Stanza& stanza : header.stanzas) {
      if (stanza.type != kX25519StanzaType) continue;  // a type this identity doesn't open: not ours
      if (auto file_key = unwrap_x25519(stanza, own, name)) return file_key;
    }
    return std::nullopt;
  }
  const SshPrivateKey key{ssh_public_key(identity.type(), identity.ssh_public_wire()), secret.clone()};
  for (const Stanza& stanza : header.stanzas) {
    if (auto file_key = unwrap_ssh(stanza, key, name)) return file_key;
  }
  return std::nullopt;
}

// A passphrase-protected ssh key opens the header only when one of its
// stanzas names the key: only then is its passphrase asked for.
std::optional<SecretBytes> unwrap_with_encrypted_ssh(const Identity& identity, const StanzaHeader& header,
                                                     KeyUi* ui, const std::string& name) {
  const SshPublicKey public_key = ssh_public_key(identity.type(), identity.ssh_public_wire());
  const bool named = std::any_of(header.stanzas.begin(), header.stanzas.end(),
                                 [&](const Stanza& stanza) { return ssh_stanza_is_for(stanza, public_key); });
  if (!named) return std::nullopt;
  const std::string& file = identity.file_name();
  std::optional<SecretBytes> passphrase;
  if (ui != nullptr) passphrase = ui->request_secret(file, KeyUi::kSshPassphraseQuestion);
  if (!passphrase) {
    throw Error(file + " is passphrase-protected and opens " + name + ", but there is no terminal to ask for its "
                "passphrase on");
  }
  const SshPrivateKey key = decrypt_ssh_identity(identity.secret(), *passphrase, public_key, file);
  for (const Stanza& stanza : header.stanzas) {
    if (auto file_key = unwrap_ssh(stanza, key, name)) return file_key;
  }
  return std::nullopt;
}

SecretBytes unwrap_with_identities(const std::vector<Identity>& identities, const StanzaHeader& header, KeyUi* ui,
                                   const PluginBatch* batch, const std::string& name) {
  // Keys that need nobody first, in order; then those that may ask for a
  // passphrase or start a program.
  for (const Identity& identity : identities) {
    if (identity.type() == KeyType::plugin || identity.encrypted()) continue;
    if (auto file_key = unwrap_natively(identity, identity.secret(), header, name)) return std::move(*file_key);
  }
  for (const Identity& identity : identities) {
    if (!identity.encrypted()) continue;
    if (auto file_key = unwrap_with_encrypted_ssh(identity, header, ui, name)) return std::move(*file_key);
  }
  if (batch != nullptr) {
    if (auto file_key = batch->file_key(header)) return std::move(*file_key);
  }
  for (const auto& [plugin, keys] : by_plugin(identities)) {
    auto file_keys = plugin_unwrap(plugin, keys, {&header.stanzas}, ui);
    if (file_keys.front()) return std::move(*file_keys.front());
  }
  const std::size_t n = header.stanzas.size();
  throw Error("no identity matches any of the " + std::to_string(n) + (n == 1 ? " recipient of " : " recipients of ") +
              name);
}

// The header's text, `at` bytes into `in`: its lines up to and including the
// MAC line, and never more than kMaxHeaderLen and one byte, which parsing
// then refuses. A file is read ahead in one piece and then just the header
// taken; a pipe a byte at a time, since it can't give back what was read
// past the header.
std::vector<std::uint8_t> read_stanza_text(InputEndpoint& in, std::uint64_t at) {
  std::vector<std::uint8_t> text;
  if (in.readable_at_offsets()) {
    // 4 KiB first, doubled while no MAC line shows: a raw key's header is
    // its 48-byte MAC line, a recipient's stanza 98 bytes, and reading the
    // 1 MiB a header may take for every small file would cost more than
    // opening it.
    const std::uint64_t size = in.source().size();
    const std::uint64_t most = std::min<std::uint64_t>(size - std::min(size, at), kMaxHeaderLen + 1);
    std::size_t end = 0;
    for (std::uint64_t want = std::min<std::uint64_t>(most, 4096);; want = std::min(most, 2 * want)) {
      text.resize(static_cast<std::size_t>(want));
      in.source().read_at(at, text);
      const auto mac_end = end_of_mac_line(text);
      end = mac_end.value_or(text.size());
      if (mac_end || want == most) break;
    }
    text.resize(end);
    if (in.read_prefix(text) != text.size()) throw Error(in.name() + ": shrank while its header was read");
    return text;
  }
  std::size_t line_start = 0;
  std::uint8_t byte = 0;
  while (text.size() <= kMaxHeaderLen && in.read_prefix({&byte, 1}) == 1) {
    text.push_back(byte);
    if (byte != '\n') continue;
    const std::string_view line(reinterpret_cast<const char*>(text.data()) + line_start, text.size() - line_start);
    if (line.starts_with(kMacLinePrefix)) break;
    line_start = text.size();
  }
  return text;
}

}  // namespace

void require_secret(const SealedSpec& spec, SealedKeyKind wanted, const std::string& name) {
  const bool given_key = !spec.key.empty(), given_passphrase = !spec.passphrase.empty();
  const bool given_identities = !spec.identities.empty();
  if (given_key + given_passphrase + given_identities > 1) {  // one would be ignored, as sealing refuses too
    throw usage_error("a file is opened with a key, a passphrase or identities: one of them");
  }
  if (wanted == SealedKeyKind::identities) {
    if (given_identities) return;
    throw usage_error(name + " was sealed to public-key recipients: open it with an identity, not a key or "
                      "passphrase",
                      Remedy::identity);
  }
  const bool passphrase = wanted == SealedKeyKind::passphrase;
  if (passphrase ? given_passphrase : given_key) return;
  const std::string secret = passphrase ? "passphrase" : "key";
  const Remedy remedy = passphrase ? Remedy::passphrase : Remedy::key;
  if (given_identities) {
    throw usage_error(name + " was sealed with a " + secret + ", not to recipients: open it with its " + secret +
                          ", not identities",
                      remedy);
  }
  const std::string other = given_key ? ", not a key" : given_passphrase ? ", not a passphrase" : "";
  throw usage_error(name + " was sealed with a " + secret + other + ": open it with its " + secret, remedy);
}

FileStart read_file_start(InputEndpoint& in) {
  FileStart start;
  const auto version = std::span(start.bytes).first(kAgeVersionLine.size());
  start.got = in.read_prefix(version);
  start.age = start.got == version.size() && std::equal(version.begin(), version.end(), kAgeVersionLine.begin());
  if (!start.age && start.got == version.size()) {
    start.got += in.read_prefix(std::span(start.bytes).subspan(version.size()));
  }
  return start;
}

StanzaHeader read_v3_header(InputEndpoint& in, std::uint64_t at) {
  return parse_stanza_header(read_stanza_text(in, at), in.name());
}

SealedKeyKind stanzas_key_kind(const StanzaHeader& header, const std::string& name) {
  check_scrypt_stands_alone(header.stanzas, name);
  const bool scrypt = header.stanzas.size() == 1 && header.stanzas.front().type == kScryptStanzaType;
  return scrypt ? SealedKeyKind::passphrase : SealedKeyKind::identities;
}

OpenedStanzas open_stanzas(const SealedSpec& spec, const Preamble& preamble,
                           std::span<const std::uint8_t> preamble_bytes, StanzaHeader header, const std::string& name) {
  OpenedStanzas opened{std::move(header), {}, {}};
  std::optional<HeaderMacKey> mac_key;
  SealedKeyKind kind = SealedKeyKind::raw_key;
  if (preamble.key_source == KeySource::raw_key) {
    if (!opened.header.stanzas.empty()) {
      throw Error(name + ": malformed header (stanzas in a file sealed with a raw key)");
    }
    require_secret(spec, kind, name);
    if (spec.key.size() != preamble.key_len) {
      throw Error("wrong key: " + name + " was sealed with a " + std::to_string(preamble.key_len) +
                  "-byte key, this key has " + std::to_string(spec.key.size()) + " bytes");
    }
    mac_key = HeaderMacKey::of_raw_key(spec.key);
    opened.body_ikm = spec.key.clone();
  } else {
    kind = stanzas_key_kind(opened.header, name);
    require_secret(spec, kind, name);
    if (kind == SealedKeyKind::passphrase) {
      auto file_key = unwrap_scrypt(opened.header.stanzas.front(), spec.passphrase, name);
      if (!file_key) throw Error(name + ": wrong passphrase (its scrypt stanza does not open with it)");
      opened.file_key = std::move(*file_key);
    } else {
      opened.file_key = unwrap_with_identities(spec.identities, opened.header, spec.ui, spec.plugin_batch.get(), name);
    }
    mac_key = HeaderMacKey::of_file_key(opened.file_key);
    opened.body_ikm = body_key(opened.file_key);
  }
  if (header_mac_matches(*mac_key, preamble_bytes, opened.header, spec.aad)) return opened;
  // Recipients files sealed before the MAC covered the associated data have
  // a MAC over the header alone: one such file can be built to open to two
  // plaintexts under two associated data.
  const bool sealed_before_aad_was_bound = kind == SealedKeyKind::identities && !spec.aad.empty() &&
                                           header_mac_matches(*mac_key, preamble_bytes, opened.header);
  if (!sealed_before_aad_was_bound) {
    const std::string secret = kind == SealedKeyKind::raw_key ? "wrong key, " : "";
    const std::string stanzas = kind == SealedKeyKind::identities ? ", or its stanzas don't all wrap the same file key"
                                                                  : "";
    throw Error(name + ": header MAC mismatch: " + secret + "wrong associated data, or the header was changed "
                "after sealing" + stanzas + " (refused before any plaintext)",
                ErrorKind::failure, Remedy::associated_data);
  }
  if (!spec.allow_uncommitted) {
    throw Error(name + ": its header does not cover the associated data given: it was sealed without associated "
                "data, or with it before paes bound the associated data to the header, and such a file can be "
                "made to open to other bytes under other associated data",
                ErrorKind::failure, Remedy::allow_uncommitted);
  }
  notify(NoticeLevel::warning, name + ": its header does not commit to the associated data (sealed before paes "
                               "bound it): another associated data could open this file to other bytes");
  return opened;
}

SecretBytes open_age_stanzas(const SealedSpec& spec, const StanzaHeader& header,
                             std::span<const std::uint8_t> version_line, const std::string& name) {
  if (!spec.key.empty()) {
    throw usage_error(name + " is an age file: it opens with an identity or a passphrase, not a raw key",
                      Remedy::identity);
  }
  if (!spec.aad.empty()) {
    throw usage_error(name + " is an age file, whose format has no associated data: drop it");
  }
  const SealedKeyKind kind = stanzas_key_kind(header, name);
  // The wrong kind of secret is age's "no identity matches" (exit 1), not
  // a usage error as for a paes file, whose preamble says what it takes.
  if (kind == SealedKeyKind::passphrase && spec.passphrase.empty() && !spec.identities.empty()) {
    throw Error("no identity matches " + name + ": it was encrypted with a passphrase (its one stanza is scrypt's)",
                ErrorKind::failure, Remedy::passphrase);
  }
  if (kind == SealedKeyKind::identities && !spec.passphrase.empty() && spec.identities.empty()) {
    throw Error("the passphrase matches no stanza of " + name + ": it was encrypted to recipients, not with a "
                "passphrase (no scrypt stanza)",
                ErrorKind::failure, Remedy::identity);
  }
  require_secret(spec, kind, name);
  SecretBytes file_key;
  if (kind == SealedKeyKind::passphrase) {
    auto unwrapped = unwrap_scrypt(header.stanzas.front(), spec.passphrase, name);
    if (!unwrapped) throw Error(name + ": wrong passphrase (its scrypt stanza does not open with it)");
    file_key = std::move(*unwrapped);
  } else {
    file_key = unwrap_with_identities(spec.identities, header, spec.ui, spec.plugin_batch.get(), name);
  }
  if (!header_mac_matches(HeaderMacKey::of_file_key(file_key), version_line, header)) {
    throw Error(name + ": header MAC mismatch: the header was changed after sealing, or its stanzas don't all wrap "
                "the same file key (refused before any plaintext)");
  }
  return file_key;
}

namespace {

// The stanzas wrapping `file_key` to `recipients`: X25519 and ssh made here,
// each plugin's from `plugin_stanzas` (its name -> what its session gave for
// this key), or from a session now when it has none.
std::vector<Stanza> wrap_with(const std::vector<Recipient>& recipients, const SecretBytes& file_key, KeyUi* ui,
                              std::vector<std::pair<std::string, PluginWrapped>> plugin_stanzas) {
  std::vector<Stanza> stanzas;
  for (const Recipient& recipient : recipients) {
    if (recipient.type() == KeyType::x25519) stanzas.push_back(wrap_x25519(file_key, recipient.x25519()));
    if (recipient.type() == KeyType::ssh_ed25519 || recipient.type() == KeyType::ssh_rsa) {
      stanzas.push_back(wrap_ssh(file_key, ssh_public_key(recipient.type(), recipient.ssh_wire())));
    }
  }
  // age-plugin.md's labels: X25519 and ssh stanzas have none; a plugin's
  // carry its own ("postquantum"), and stanzas of one file must all carry the
  // same, or a classical recipient would undo a post-quantum one.
  std::optional<std::vector<std::string>> labels;
  std::string labelled_by = "the X25519 and ssh recipients' stanzas";
  if (!stanzas.empty()) labels.emplace();
  for (const auto& [plugin, keys] : by_plugin(recipients)) {
    const std::string& name = plugin;  // a structured binding, which clang's lambdas can't capture
    const auto ahead = std::find_if(plugin_stanzas.begin(), plugin_stanzas.end(),
                                    [&name](const auto& given) { return given.first == name; });
    PluginWrapped wrapped = ahead != plugin_stanzas.end() ? std::move(ahead->second)
                                                          : plugin_wrap(plugin, keys, {&file_key}, ui);
    if (labels && *labels != wrapped.labels) {
      const auto list = [](const std::vector<std::string>& set) {
        std::string text;
        for (const std::string& label : set) text += (text.empty() ? "" : ", ") + printable(label);
        return set.empty() ? std::string("none") : text;
      };
      throw usage_error("these recipients can't share a file: age-plugin-" + plugin + "'s stanzas carry the labels " +
                        list(wrapped.labels) + ", " + labelled_by + " carry " + list(*labels) +
                        " (a post-quantum recipient beside a classical one would leave the file as weak as the "
                        "classical one)");
    }
    labels = wrapped.labels;
    labelled_by = "age-plugin-" + plugin + "'s stanzas";
    for (Stanza& stanza : wrapped.stanzas.front()) stanzas.push_back(std::move(stanza));
  }
  if (stanzas.size() > kMaxStanzas) {
    throw usage_error("at most " + std::to_string(kMaxStanzas) + " recipient stanzas, and these recipients make " +
                      std::to_string(stanzas.size()));
  }
  return stanzas;
}

}  // namespace

std::vector<Stanza> wrap_to_recipients(const std::vector<Recipient>& recipients, const SecretBytes& file_key,
                                       KeyUi* ui) {
  return wrap_with(recipients, file_key, ui, {});
}

NewFileKey new_file_key(const SealedSpec& spec) {
  if (spec.plugin_batch) {
    if (std::optional<PluginBatch::Wrapped> ahead = spec.plugin_batch->take_wrapped()) {
      std::vector<Stanza> stanzas = wrap_with(spec.recipients, ahead->file_key, spec.ui, std::move(ahead->by_plugin));
      return {std::move(ahead->file_key), std::move(stanzas)};
    }
  }
  SecretBytes file_key(kFileKeyLen);
  random_bytes({file_key.data(), file_key.size()});
  std::vector<Stanza> stanzas = wrap_to_recipients(spec.recipients, file_key, spec.ui);
  return {std::move(file_key), std::move(stanzas)};
}

std::shared_ptr<const PluginBatch> PluginBatch::wrap_ahead(const std::vector<Recipient>& recipients,
                                                          std::size_t files, KeyUi* ui) {
  auto batch = std::make_shared<PluginBatch>();
  const auto plugins = by_plugin(recipients);
  if (plugins.empty() || files == 0) return batch;
  batch->wrapped_.resize(files);
  std::vector<const SecretBytes*> keys;
  for (Wrapped& wrapped : batch->wrapped_) {
    wrapped.file_key = SecretBytes(kFileKeyLen);
    random_bytes({wrapped.file_key.data(), wrapped.file_key.size()});
    keys.push_back(&wrapped.file_key);
  }
  for (const auto& [plugin, plugin_recipients] : plugins) {
    PluginWrapped all = plugin_wrap(plugin, plugin_recipients, keys, ui);
    for (std::size_t i = 0; i < files; ++i) {
      batch->wrapped_[i].by_plugin.emplace_back(plugin, PluginWrapped{{std::move(all.stanzas[i])}, all.labels});
    }
  }
  return batch;
}

std::optional<PluginBatch::Wrapped> PluginBatch::take_wrapped() const {
  const std::lock_guard lock(wrapped_mutex_);
  if (wrapped_.empty()) return std::nullopt;
  Wrapped taken = std::move(wrapped_.back());
  wrapped_.pop_back();
  return taken;
}

namespace {

// The stanzas of `path`'s header, where it has them: a paes file sealed to
// recipients, an age file, binary or armored. Nothing for any other, or one
// that can't be read: its own opening says why.
std::optional<StanzaHeader> stanzas_of(const std::string& path) {
  try {
    InputEndpoint in(path, true, Armor::paes);
    const FileStart start = read_file_start(in);
    if (start.age) return read_v3_header(in, kAgeVersionLine.size());
    if (start.got != kPreambleLen) return std::nullopt;
    const Preamble preamble = Preamble::decode(start.bytes, path);
    if (preamble.version == kUncommittedFormatVersion || preamble.key_source != KeySource::recipient_stanzas) {
      return std::nullopt;
    }
    return read_v3_header(in, kPreambleLen);
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace

std::shared_ptr<const PluginBatch> PluginBatch::open_ahead(const std::vector<Identity>& identities,
                                                          const std::vector<std::string>& paths, KeyUi* ui) {
  auto batch = std::make_shared<PluginBatch>();
  const auto plugins = by_plugin(identities);
  if (plugins.empty()) return batch;
  // The headers no native identity opens: what the plugins would be asked
  // for file by file.
  std::vector<StanzaHeader> headers;
  for (const std::string& path : paths) {
    std::optional<StanzaHeader> header = stanzas_of(path);
    if (!header) continue;
    const bool opened_natively = std::any_of(identities.begin(), identities.end(), [&](const Identity& identity) {
      try {
        return identity.type() != KeyType::plugin && !identity.encrypted() &&
               unwrap_natively(identity, identity.secret(), *header, path).has_value();
      } catch (const Error&) {
        return false;  // a stanza of its type that fails: the file's own opening says so
      }
    });
    if (!opened_natively) headers.push_back(std::move(*header));
  }
  if (headers.empty()) return batch;
  std::vector<const std::vector<Stanza>*> files;
  for (const StanzaHeader& header : headers) files.push_back(&header.stanzas);
  for (const auto& [plugin, keys] : plugins) {
    std::vector<std::optional<SecretBytes>> file_keys;
    try {
      file_keys = plugin_unwrap(plugin, keys, files, ui);
    } catch (const Error&) {
      continue;  // each file's own session fails, and says why, for that file
    }
    for (std::size_t i = 0; i < headers.size(); ++i) {
      if (file_keys[i]) batch->file_keys_.try_emplace(headers[i].mac_input, std::move(*file_keys[i]));
    }
  }
  return batch;
}

std::optional<SecretBytes> PluginBatch::file_key(const StanzaHeader& header) const {
  const auto found = file_keys_.find(header.mac_input);
  if (found == file_keys_.end()) return std::nullopt;
  return found->second.clone();
}

SecretBytes body_key(const SecretBytes& file_key) {
  constexpr std::string_view kBodyInfo = "paes v3 body";
  const auto* info = reinterpret_cast<const std::uint8_t*>(kBodyInfo.data());
  return hkdf_sha256(file_key, {}, {info, kBodyInfo.size()}, kRecipientsKeyLen);
}

}  // namespace paes
