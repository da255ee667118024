#include "api/plugin_client.hpp"

#include <algorithm>
#include <charconv>
#include <set>
#include <utility>

#include "format/plugin_protocol.hpp"
#include "format/x25519_stanza.hpp"
#include "io/plugin_process.hpp"
#include "paes/error.hpp"
#include "util/base64.hpp"
#include "util/printable.hpp"

namespace paes {
namespace {

// A plugin's text (a message, a prompt, an error) for one line on a
// terminal: bounded, line breaks as spaces, control characters escaped.
std::string plugin_text(std::span<const std::uint8_t> bytes) {
  constexpr std::size_t kMaxText = 1000;
  std::string text(reinterpret_cast<const char*>(bytes.data()), std::min(bytes.size(), kMaxText));
  std::replace(text.begin(), text.end(), '\n', ' ');
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.pop_back();
  return printable(text) + (bytes.size() > kMaxText ? "..." : "");
}

std::optional<std::size_t> parse_index(std::string_view text) {
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || (text.size() > 1 && text[0] == '0')) {
    return std::nullopt;
  }
  return value;
}

class PluginSession {
 public:
  PluginSession(const std::string& name, std::string_view state_machine, KeyUi* ui)
      : process_(name, state_machine),
        reader_([this](std::span<std::uint8_t> buffer) { return process_.read(buffer); }, process_.program()),
        ui_(ui) {}

  const std::string& program() const { return process_.program(); }

  void send(std::string_view command, const std::vector<std::string>& args = {},
            std::span<const std::uint8_t> body = {}) {
    std::string message = encode_plugin_message(command, args, body);
    try {
      process_.write(message);
    } catch (const Error& e) {
      wipe(message);
      throw ended(e);
    }
    wipe(message);  // it may carry a file key or an identity
  }

  Stanza next() {
    try {
      return reader_.next();
    } catch (const Error& e) {
      throw ended(e);
    }
  }

  // Answers what both state machines' second phases share, and what this
  // client doesn't know ("unsupported": grease, later commands). False for
  // the commands the caller handles.
  bool answer_shared(const Stanza& message, std::initializer_list<std::string_view> own) {
    const std::string& command = message.type;
    if (std::find(own.begin(), own.end(), command) != own.end()) return false;
    if (command == "msg") {
      if (ui_ != nullptr) ui_->message(program(), plugin_text(message.body));
      send(ui_ != nullptr ? "ok" : "fail");
    } else if (command == "confirm") {
      answer_confirm(message);
    } else if (command == "request-public") {
      const auto value = ui_ != nullptr ? ui_->request_public(program(), plugin_text(message.body)) : std::nullopt;
      if (value) {
        send("ok", {}, {reinterpret_cast<const std::uint8_t*>(value->data()), value->size()});
      } else {
        send("fail");
      }
    } else if (command == "request-secret") {
      const auto secret = ui_ != nullptr ? ui_->request_secret(program(), plugin_text(message.body)) : std::nullopt;
      if (secret) {
        send("ok", {}, secret->view());
      } else {
        secrets_refused_ = true;
        send("fail");
      }
    } else if (command == "error") {
      errors_.push_back(describe_error(message));
      send("ok");
    } else {
      send("unsupported");
    }
    return true;
  }

  // After the plugin's "done": it must exit cleanly, and have reported no error.
  void finish() {
    const std::optional<int> status = process_.finish(false);
    if (!errors_.empty()) {
      std::string text = program() + ": " + errors_.front();
      if (errors_.size() > 1) text += " (and " + std::to_string(errors_.size() - 1) + " more errors)";
      if (secrets_refused_) text += "; it asked for a secret, and paes had no terminal to ask on";
      throw Error(text);
    }
    if (status && *status != 0) {
      throw Error(program() + " was done but exited with status " + std::to_string(*status));
    }
  }

 private:
  void answer_confirm(const Stanza& message) {
    if (message.args.empty() || message.args.size() > 2) {
      throw ended(Error(program() + ": broke age's plugin protocol (confirm takes one or two choices)"));
    }
    const auto yes = decode_base64(message.args[0]);
    const auto no = message.args.size() == 2 ? decode_base64(message.args[1]) : std::vector<std::uint8_t>{};
    if (!yes || !no) throw ended(Error(program() + ": broke age's plugin protocol (a choice that is not base64)"));
    const auto answer = ui_ != nullptr ? ui_->confirm(program(), plugin_text(message.body), plugin_text(*yes),
                                                      plugin_text(*no))
                                       : std::nullopt;
    if (answer) {
      send("ok", {*answer ? "yes" : "no"});
    } else {
      send("fail");
    }
  }

  std::string describe_error(const Stanza& message) const {
    const std::string said = plugin_text(message.body);
    if (message.args.empty()) return said;
    const std::string& kind = message.args[0];
    if (kind == "recipient" || kind == "identity") {
      return "its " + printable(kind) + (message.args.size() > 1 ? " " + printable(message.args[1]) : "") + ": " +
             said;
    }
    return said;
  }

  // An Error for a session that ended in the middle: what went wrong, and
  // how the plugin exited and what it said last on stderr.
  Error ended(const Error& e) {
    const std::optional<int> status = process_.finish(true);
    std::string text = e.what();
    const std::string said = process_.last_stderr_line();
    if (status && *status != 0) text += " (it exited with status " + std::to_string(*status) + ")";
    if (!said.empty()) text += "; it said: " + said;
    return Error(text);
  }

  PluginProcess process_;
  PluginMessageReader reader_;
  KeyUi* ui_;
  std::vector<std::string> errors_;
  bool secrets_refused_ = false;
};

}  // namespace

PluginWrapped plugin_wrap(const std::string& plugin_name, const std::vector<const Recipient*>& recipients,
                          const std::vector<const SecretBytes*>& file_keys, KeyUi* ui) {
  PluginSession session(plugin_name, "recipient-v1", ui);
  for (const Recipient* recipient : recipients) {
    if (const SecretBytes* identity = recipient->plugin_identity()) {
      std::string text(reinterpret_cast<const char*>(identity->data()), identity->size());
      session.send("add-identity", {text});
      wipe(text);
    } else {
      session.send("add-recipient", {recipient->plugin_recipient()});
    }
  }
  for (const SecretBytes* file_key : file_keys) session.send("wrap-file-key", {}, file_key->view());
  session.send("extension-labels");
  session.send("done");

  PluginWrapped wrapped;
  wrapped.stanzas.resize(file_keys.size());
  std::optional<std::set<std::string>> labels;
  std::size_t stanzas = 0;
  for (Stanza message = session.next(); message.type != "done"; message = session.next()) {
    if (session.answer_shared(message, {"recipient-stanza", "labels"})) continue;
    const auto broke = [&](const std::string& why) {
      return Error(session.program() + ": broke age's plugin protocol (" + why + ")");
    };
    if (message.type == "labels") {
      if (labels) throw broke("labels sent twice");
      labels.emplace(message.args.begin(), message.args.end());
      if (labels->size() != message.args.size()) throw broke("a label sent twice");
      session.send("ok");
      continue;
    }
    if (message.args.size() < 2) throw broke("a recipient-stanza without a file index and a type");
    const auto index = parse_index(message.args[0]);
    if (!index || *index >= file_keys.size()) throw broke("a recipient-stanza for a file it was not given");
    if (++stanzas > kMaxStanzas) throw broke("more than " + std::to_string(kMaxStanzas) + " stanzas");
    Stanza stanza;
    stanza.type = message.args[1];
    stanza.args.assign(message.args.begin() + 2, message.args.end());
    stanza.body = std::move(message.body);
    wrapped.stanzas[*index].push_back(std::move(stanza));
    session.send("ok");
  }
  session.finish();
  for (const auto& file : wrapped.stanzas) {
    if (file.empty()) throw Error(session.program() + " wrapped a file key to no stanza");
  }
  if (labels) wrapped.labels.assign(labels->begin(), labels->end());
  return wrapped;
}

std::vector<std::optional<SecretBytes>> plugin_unwrap(const std::string& plugin_name,
                                                      const std::vector<const Identity*>& identities,
                                                      const std::vector<const std::vector<Stanza>*>& files,
                                                      KeyUi* ui) {
  PluginSession session(plugin_name, "identity-v1", ui);
  for (const Identity* identity : identities) {
    std::string text(reinterpret_cast<const char*>(identity->secret().data()), identity->secret().size());
    session.send("add-identity", {text});
    wipe(text);
  }
  for (std::size_t file = 0; file < files.size(); ++file) {
    for (const Stanza& stanza : *files[file]) {
      std::vector<std::string> args{std::to_string(file), stanza.type};
      args.insert(args.end(), stanza.args.begin(), stanza.args.end());
      session.send("recipient-stanza", args, stanza.body);
    }
  }
  session.send("done");

  std::vector<std::optional<SecretBytes>> file_keys(files.size());
  for (Stanza message = session.next(); message.type != "done"; message = session.next()) {
    if (session.answer_shared(message, {"file-key"})) continue;
    const auto index = message.args.size() == 1 ? parse_index(message.args[0]) : std::nullopt;
    const bool valid = index && *index < files.size() && !file_keys[*index] && message.body.size() == kFileKeyLen;
    SecretBytes key(message.body.data(), message.body.size());
    wipe(message.body);
    if (!valid) {
      throw Error(session.program() + ": broke age's plugin protocol (a file-key for a file it was not given, "
                  "sent twice, or not " + std::to_string(kFileKeyLen) + " bytes)");
    }
    file_keys[*index] = std::move(key);
    session.send("ok");
  }
  session.finish();
  return file_keys;
}

}  // namespace paes
