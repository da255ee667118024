#include "cli/terminal_ui.hpp"

#include <string>

#include "cli/passphrase.hpp"
#include "cli/say.hpp"
#include "util/printable.hpp"

namespace paes::cli {

void TerminalUi::message(const std::string& from, std::string_view text) {
  const std::lock_guard lock(mutex_);
  say("paes: " + printable(from) + ": " + std::string(text) + "\n");
}

std::optional<bool> TerminalUi::confirm(const std::string& from, std::string_view text, std::string_view yes,
                                        std::string_view no) {
  const std::lock_guard lock(mutex_);
  const std::string choices = no.empty() ? "[" + std::string(yes) + "]"
                                         : "[1: " + std::string(yes) + ", 2: " + std::string(no) + "]";
  while (true) {
    const auto answer = ask_on_terminal(printable(from) + ": " + std::string(text) + " " + choices + " ", true);
    if (!answer) return std::nullopt;
    const std::string_view typed(reinterpret_cast<const char*>(answer->data()), answer->size());
    if (no.empty() || typed == "1" || typed == yes) return true;
    if (typed == "2" || typed == no) return false;
  }
}

std::optional<std::string> TerminalUi::request_public(const std::string& from, std::string_view text) {
  const std::lock_guard lock(mutex_);
  const auto answer = ask_on_terminal(printable(from) + ": " + std::string(text) + " ", true);
  if (!answer) return std::nullopt;
  return std::string(reinterpret_cast<const char*>(answer->data()), answer->size());
}

std::optional<SecretBytes> TerminalUi::request_secret(const std::string& from, std::string_view text) {
  const std::lock_guard lock(mutex_);
  // Only an ssh key's passphrase is kept: a plugin's PIN presented again to
  // each file's plugin, if it was mistyped, would lock a hardware key.
  const bool kept = text == kSshPassphraseQuestion;
  if (const auto known = passphrases_.find(from); kept && known != passphrases_.end()) return known->second.clone();
  auto answer = ask_on_terminal(printable(from) + ": " + std::string(text) + " ", false);
  if (answer && kept) passphrases_.emplace(from, answer->clone());
  return answer;
}

TerminalUi& terminal_ui() {
  static TerminalUi ui;
  return ui;
}

}  // namespace paes::cli
