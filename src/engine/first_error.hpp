// Keeps the first exception thrown by any of several workers, so a job fails
// with the error that caused it rather than a consequence of it; or, given
// the order of their work, the error of the earliest.
#pragma once

#include <cstdint>
#include <exception>
#include <mutex>

namespace paes {

class FirstError {
 public:
  void capture() noexcept { capture(kUnordered); }
  // Of errors captured with an order (a chunk's index), the lowest one's is
  // kept: workers that fail at once on several chunks report the first bad
  // chunk of the job, not whichever thread lost the race (a file with its
  // segments 1 and 2 swapped said "segment 2" one run in nine).
  void capture(std::uint64_t order) noexcept {
    std::lock_guard lock(mutex_);
    if (!error_ || order < order_) {
      error_ = std::current_exception();
      order_ = order;
    }
  }
  // Whether an error of lower order than `order` was captured: work after
  // it is not worth doing, work before it may fail first.
  bool failed_before(std::uint64_t order) const noexcept {
    std::lock_guard lock(mutex_);
    return error_ != nullptr && order_ < order;
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
  static constexpr std::uint64_t kUnordered = UINT64_MAX;
  mutable std::mutex mutex_;
  std::exception_ptr error_;
  std::uint64_t order_ = kUnordered;
};

}  // namespace paes
