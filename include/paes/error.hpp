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

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ErrorKind kind = ErrorKind::failure)
      : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

inline Error usage_error(const std::string& message) { return Error(message, ErrorKind::usage); }

// An Error naming the failed system call's target and strerror(errno).
Error system_error(const std::string& what);

}  // namespace paes
