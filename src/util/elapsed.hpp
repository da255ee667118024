// Seconds of wall time since a steady_clock reading: what every timing of
// paes (reports, benchmarks, auto's measurements) takes.
#pragma once

#include <chrono>

namespace paes {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace paes
