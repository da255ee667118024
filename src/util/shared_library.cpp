#include "util/shared_library.hpp"

#include <dlfcn.h>

#include "paes/error.hpp"

namespace paes {

bool SharedLibrary::load() const {
  std::call_once(once_, [this] {
    if (::dlopen(soname_, RTLD_NOW | RTLD_GLOBAL) != nullptr) {
      loaded_ = true;
    } else {
      const char* why = ::dlerror();
      why_not_ = std::string(needed_for_) +
                 ", which is missing here: " + (why != nullptr ? why : std::string(soname_) + " can't be opened");
    }
  });
  return loaded_;
}

void* SharedLibrary::address_of(const char* name) const {
  if (!load()) throw Error(why_not_);
  void* address = ::dlsym(RTLD_DEFAULT, name);
  if (address == nullptr) throw Error(std::string(soname_) + " has no function " + name + ": an older version?");
  return address;
}

}  // namespace paes
