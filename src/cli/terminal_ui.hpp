// The person at the terminal, as keys need them (paes::KeyUi): a plugin's
// messages on stderr, its questions and an encrypted ssh key's passphrase
// asked on /dev/tty, so that standard input and output stay the data's.
// The texts arrive from the library bounded and escaped (plugins are not
// trusted); without a terminal every question is refused, and the plugin or
// key says what it needed.
//
// A data set's files open side by side, each asking what its key needs: one
// question is on the terminal at a time, and an ssh key's passphrase is asked
// once a run (kept, wiped when paes ends, for the next file the key opens).
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "paes/recipient.hpp"

namespace paes::cli {

class TerminalUi final : public KeyUi {
 public:
  void message(const std::string& from, std::string_view text) override;
  std::optional<bool> confirm(const std::string& from, std::string_view text, std::string_view yes,
                              std::string_view no) override;
  std::optional<std::string> request_public(const std::string& from, std::string_view text) override;
  std::optional<SecretBytes> request_secret(const std::string& from, std::string_view text) override;

 private:
  std::mutex mutex_;
  std::map<std::string, SecretBytes> passphrases_;  // by ssh key file
};

// The one the tool's specs point to: one person, so one serves every job.
TerminalUi& terminal_ui();

}  // namespace paes::cli
