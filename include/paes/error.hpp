// The one error type of paes: a message a person can act on, and whether the
// mistake was in how paes was invoked (usage) or in the data and system it met.
#pragma once

#include <stdexcept>
#include <string>

namespace paes {

enum class ErrorKind {
  failure,  // bad input data, authentication or I/O failure: exit status 1
  usage,    // a wrong or missing argument: exit status 2
};

// What the caller may change to cure an error, where one change would. The
// message says it in the library's terms; a front end (paes's CLI) names its
// own option for it, which the library never does.
enum class Remedy {
  none,
  force,            // allow replacing an existing output (the `force` option)
  output_file,      // send the output to a file or pipe, not a terminal
  files,            // name the input and the output as files, not streams
  key,              // open with the raw key the file was sealed with
  passphrase,       // open with the passphrase the file was sealed with
  identity,         // open with an X25519 identity of one of the file's recipients
  associated_data,  // check the associated data (the spec's `aad`)
  allow_uncommitted,  // open a file that does not commit to its key (the spec's `allow_uncommitted`)
  armored_input,      // the input is base64 text: read it as armor (the options' `armor`)
  write_in_place,     // write the existing output through a stream (stdout redirected), not a temporary
  no_salt,            // read openssl enc -nosalt data (Pbkdf2Key::no_salt)
  pbkdf2_parameters,  // give PBKDF2's digest, iterations and key size (Pbkdf2Key)
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ErrorKind kind = ErrorKind::failure, Remedy remedy = Remedy::none)
      : std::runtime_error(message), kind_(kind), remedy_(remedy) {}
  ErrorKind kind() const noexcept { return kind_; }
  Remedy remedy() const noexcept { return remedy_; }

 private:
  ErrorKind kind_;
  Remedy remedy_;
};

inline Error usage_error(const std::string& message, Remedy remedy = Remedy::none) {
  return Error(message, ErrorKind::usage, remedy);
}

// An Error naming the failed system call's target and strerror(errno).
Error system_error(const std::string& what);

}  // namespace paes
