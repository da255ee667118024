// The person at the terminal, as keys need them (paes::KeyUi): a plugin's
// messages on stderr, its questions and an encrypted ssh key's passphrase
// asked on /dev/tty, so that standard input and output stay the data's.
// The texts arrive from the library bounded and escaped (plugins are not
// trusted); without a terminal every question is refused, and the plugin or
// key says what it needed.
#pragma once

#include "paes/recipient.hpp"

namespace paes::cli {

class TerminalUi final : public KeyUi {
 public:
  void message(const std::string& from, std::string_view text) override;
  std::optional<bool> confirm(const std::string& from, std::string_view text, std::string_view yes,
                              std::string_view no) override;
  std::optional<std::string> request_public(const std::string& from, std::string_view text) override;
  std::optional<SecretBytes> request_secret(const std::string& from, std::string_view text) override;
};

// The one the tool's specs point to (stateless, so one serves every job).
TerminalUi& terminal_ui();

}  // namespace paes::cli
