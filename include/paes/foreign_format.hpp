// Files given as paes files that are another tool's: what the sealed
// format's reader (src/format/sealed_format.cpp) throws when it recognises
// one, so a caller may tell its user how to read it. paes/sealed.hpp
// includes this header.
#pragma once

#include <string>

#include "paes/error.hpp"

namespace paes {

// What a file given as a paes file, and not one, looks like: another tool's
// format, which a caller may tell its user how to read.
enum class ForeignFormat {
  age,
  openssl_salted,      // openssl enc's "Salted__": its cipher mode is not in the file
  openpgp,             // gpg's, binary or armored
  likely_tink_stream,  // a first byte that is a Tink header's length: a guess
};
class ForeignFormatError : public Error {
 public:
  ForeignFormatError(const std::string& message, ForeignFormat format) : Error(message), format_(format) {}
  ForeignFormat format() const noexcept { return format_; }

 private:
  ForeignFormat format_;
};

}  // namespace paes
