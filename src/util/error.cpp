#include <cerrno>
#include <cstring>

#include "paes/error.hpp"

namespace paes {

Error system_error(const std::string& what) { return Error(what + ": " + std::strerror(errno)); }

}  // namespace paes
