// Version 3 of the sealed format (and age's header) on the opening side,
// shared by opening (sealed.cpp), re-keying (rekey.cpp) and inspecting:
// telling the two apart, reading the header that follows the preamble, finding its key (a raw key, a passphrase's scrypt
// stanza, or an identity's X25519 stanza), and checking the header's MAC,
// which covers the associated data, under it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "api/plugin_client.hpp"
#include "format/sealed_format.hpp"
#include "format/stanza_header.hpp"
#include "paes/endpoint.hpp"
#include "paes/sealed.hpp"
#include "paes/secret.hpp"

namespace paes {

// Throws a usage Error unless `spec` gives the kind of secret `wanted` (and
// only one kind), naming the file `name` and what opens it.
void require_secret(const SealedSpec& spec, SealedKeyKind wanted, const std::string& name);

// A sealed file's first bytes, read from `in`: age's version line (`age`;
// nothing more is read), or else up to a preamble's 32 bytes (`got` of them:
// fewer where the input ends first). The version line is shorter than a
// preamble, so reading it first tells the two apart without reading past it.
struct FileStart {
  std::array<std::uint8_t, kPreambleLen> bytes{};
  std::size_t got = 0;
  bool age = false;
};
FileStart read_file_start(InputEndpoint& in);

// Reads the header at `at` bytes into `in` (just after the preamble) and
// parses it. Throws Error for a malformed header.
StanzaHeader read_v3_header(InputEndpoint& in, std::uint64_t at);

// What opens a header's stanzas: a passphrase (one scrypt stanza alone) or
// identities (X25519 stanzas).
SealedKeyKind stanzas_key_kind(const StanzaHeader& header, const std::string& name);

struct OpenedStanzas {
  StanzaHeader header;
  SecretBytes file_key;  // empty for a raw-key file
  SecretBytes body_ikm;  // the body's input key: body_key(file_key), or the raw key
};

// Opens `header`, read (read_v3_header) from the file `name` after
// `preamble_bytes`, with `spec`'s key, passphrase or identities: every reader who gets past
// this holds the one key the header's MAC commits to (HMAC-SHA-256 is
// committing: two keys that verify one MAC would be a collision), and the
// associated data it covers, so no two readers read different bytes,
// whatever the stanzas wrap. A header that verifies only without the
// associated data was sealed before the MAC covered it: refused unless
// spec.allow_uncommitted, which notifies a warning. Throws Error: a
// malformed header, a secret that doesn't open it, a MAC that doesn't verify.
OpenedStanzas open_stanzas(const SealedSpec& spec, const Preamble& preamble,
                           std::span<const std::uint8_t> preamble_bytes, StanzaHeader header, const std::string& name);

// An age file's header (read with read_v3_header after its version line,
// `version_line`), opened with `spec`'s passphrase (a scrypt stanza alone)
// or identities: the file key, once the header's MAC verifies under it.
// Throws Error: a raw key, associated data or the wrong kind of secret (usage
// Errors), a secret that opens no stanza, a MAC that doesn't verify.
SecretBytes open_age_stanzas(const SealedSpec& spec, const StanzaHeader& header,
                             std::span<const std::uint8_t> version_line, const std::string& name);

// The stanzas that wrap `file_key` to each of `recipients`: X25519 and ssh
// stanzas made here, a plugin's by one recipient-v1 session per plugin (its
// requests to `ui`). Throws Error: a plugin fails, plugins' stanzas carry
// labels that forbid them beside the others (a usage Error), more than
// kMaxStanzas stanzas.
std::vector<Stanza> wrap_to_recipients(const std::vector<Recipient>& recipients, const SecretBytes& file_key,
                                       KeyUi* ui);

// The file keys age plugins unwrapped ahead for many files (SealedSpec's
// plugin_batch), by their headers' stanzas: a file changed since gets none,
// and its own sessions then open it (or not).
class PluginBatch {
 public:
  // File keys made ahead for `files` files sealed to `recipients`, each
  // wrapped by one recipient-v1 session per plugin among them for all the
  // files. Throws Error as wrap_to_recipients does.
  static std::shared_ptr<const PluginBatch> wrap_ahead(const std::vector<Recipient>& recipients, std::size_t files,
                                                       KeyUi* ui);
  // Reads the header of each of `paths` (paes files sealed to recipients, and
  // age files; others, and those native identities open, are left out) and
  // runs one identity-v1 session per plugin of `identities` for all of them.
  // A plugin that fails gives none: each file's own session says why.
  static std::shared_ptr<const PluginBatch> open_ahead(const std::vector<Identity>& identities,
                                                       const std::vector<std::string>& paths, KeyUi* ui);
  // The file key a plugin gave for a header of these stanzas, if any.
  std::optional<SecretBytes> file_key(const StanzaHeader& header) const;
  std::size_t size() const { return file_keys_.size(); }

  // A file key the plugins wrapped ahead, and each plugin's stanzas for it;
  // each is handed out once, nothing once they are all taken.
  struct Wrapped {
    SecretBytes file_key;
    std::vector<std::pair<std::string, PluginWrapped>> by_plugin;  // plugin name, its stanzas for this key
  };
  std::optional<Wrapped> take_wrapped() const;

 private:
  std::map<std::string, SecretBytes> file_keys_;  // by the header's mac_input: its stanzas' text
  mutable std::mutex wrapped_mutex_;
  mutable std::vector<Wrapped> wrapped_;  // taken from the back
};

// A new file key and its stanzas for spec.recipients: one the spec's plugin
// batch wrapped ahead where it has one left (its X25519 and ssh stanzas made
// here), else a random one wrapped by wrap_to_recipients.
struct NewFileKey {
  SecretBytes file_key;
  std::vector<Stanza> stanzas;
};
NewFileKey new_file_key(const SealedSpec& spec);

// The body's input key: the file key under a label of paes' own, so that it
// is neither age's payload key nor its header MAC key.
SecretBytes body_key(const SecretBytes& file_key);

}  // namespace paes
