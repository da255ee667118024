#include "util/core_dumps.hpp"

#include <sys/prctl.h>

namespace paes {

bool forbid_core_dumps() noexcept { return ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0; }

}  // namespace paes
