#include "cli/descriptors.hpp"

#include <dirent.h>

#include <cstdlib>
#include <optional>
#include <set>
#include <string>

#include "paes/endpoint.hpp"
#include "paes/error.hpp"

namespace paes::cli {
namespace {

std::set<int>& inherited() {
  static std::set<int> fds;
  return fds;
}
bool g_known = false;  // false where /proc/self/fd can't be read: nothing is refused then

}  // namespace

void remember_inherited_descriptors() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return;
  const int own = ::dirfd(dir);
  while (const dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && fd > 2 && fd != own) inherited().insert(static_cast<int>(fd));
  }
  ::closedir(dir);
  g_known = true;
}

void refuse_own_descriptor(const std::string& path, const char* what) {
  const std::optional<int> fd = descriptor_named(path);
  if (!g_known || !fd || *fd <= 2 || inherited().count(*fd) != 0) return;
  throw usage_error(std::string(what) + " " + path + ": descriptor " + std::to_string(*fd) +
                    " was not open when paes started (paes' own descriptors are no input or output)");
}

}  // namespace paes::cli
