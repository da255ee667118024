// age plugins as a client: C2SP age-plugin.md's recipient-v1 (wrapping file
// keys) and identity-v1 (unwrapping them) state machines, each one session
// of one age-plugin-NAME process (io/plugin_process) for all of a plugin's
// keys and all the files at hand, so that a hardware key is touched once
// per run, not once per file or per key.
//
// The plugin leads the second phase; what it asks of the person (msg,
// confirm, request-public, request-secret) goes to the KeyUi, its texts
// bounded and their control characters escaped first; what it doesn't
// define is answered "unsupported", as the spec asks. Its errors end the
// session with an Error that names the plugin and says what it said.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "format/stanza_header.hpp"
#include "paes/recipient.hpp"
#include "paes/secret.hpp"

namespace paes {

struct PluginWrapped {
  std::vector<std::vector<Stanza>> stanzas;  // for each file key, in order
  std::vector<std::string> labels;           // the label set its stanzas carry (sorted)
};

// Wraps each of `file_keys` to `recipients`, all of them of the plugin
// `plugin_name` (plugin recipients, or plugin identities to seal to).
// Throws Error: the plugin is missing, fails, reports an error, breaks the
// protocol, or wraps a file key to no stanza.
PluginWrapped plugin_wrap(const std::string& plugin_name, const std::vector<const Recipient*>& recipients,
                          const std::vector<const SecretBytes*>& file_keys, KeyUi* ui);

// The file key of each file whose stanzas one of `identities` (all of the
// plugin `plugin_name`) opens, nothing for the others. Every stanza of each
// file goes to the plugin (it ignores types it doesn't know). Throws Error:
// the plugin is missing, fails, reports an error for an identity or a
// stanza, breaks the protocol, or sends a file key that is not 16 bytes.
std::vector<std::optional<SecretBytes>> plugin_unwrap(const std::string& plugin_name,
                                                      const std::vector<const Identity*>& identities,
                                                      const std::vector<const std::vector<Stanza>*>& files,
                                                      KeyUi* ui);

}  // namespace paes
