// Text that comes from outside (file names above all) made safe for one line
// on a terminal: an error or warning is one line, and an escape sequence in a
// file name must not reach the terminal as one.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace paes {

// `text` with its control characters (below 0x20, and 0x7f) written as \xNN.
inline std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace paes
