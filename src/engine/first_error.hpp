// Keeps the first exception thrown by any of several workers, so a job fails
// with the error that caused it rather than a consequence of it.
#pragma once

#include <exception>
#include <mutex>

namespace paes {

class FirstError {
 public:
  void capture() noexcept {
    std::lock_guard lock(mutex_);
    if (!error_) error_ = std::current_exception();
  }
  bool failed() const noexcept {
    std::lock_guard lock(mutex_);
    return error_ != nullptr;
  }
  void rethrow() const {
    std::lock_guard lock(mutex_);
    if (error_) std::rethrow_exception(error_);
  }

 private:
  mutable std::mutex mutex_;
  std::exception_ptr error_;
};

}  // namespace paes
