// A shared library opened at its first use (dlopen), for what only some jobs
// need: the GPU loaders, ipsec-mb, libssh and libsodium. Linked in the usual
// way, each was mapped and relocated by every run, `paes --version` included,
// and a small job paid for all of them (docs/PERFORMANCE.md, "Start-up").
//
// Opened RTLD_GLOBAL and looked up in the global scope (RTLD_DEFAULT), so a
// symbol resolves as it would had the library been linked: an LD_PRELOAD shim
// still comes first (tests/gpu/opencl_fault_shim.c relies on this).
#pragma once

#include <mutex>
#include <string>

namespace paes {

class SharedLibrary {
 public:
  // `soname`: the name the runtime package installs (libOpenCL.so.1), which
  // the ABI the code was compiled against goes with; `needed_for`, what a
  // failure to open it stops ("ssh keys are read with libssh"), opens why_not.
  SharedLibrary(const char* soname, const char* needed_for) : soname_(soname), needed_for_(needed_for) {}
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  // Opens it at the first call, from any thread, once; whether it is there.
  // It is never closed: its code may run until exit (a driver's own teardown).
  bool load() const;

  // A function of the library, opening it first. Throws Error where it can't
  // be opened (`needed_for`, then dlerror's words, naming the file) or lacks
  // the function (an older version than the one built against).
  template <typename Function>
  Function function(const char* name) const {
    return reinterpret_cast<Function>(address_of(name));
  }

 private:
  void* address_of(const char* name) const;

  const char* soname_;
  const char* needed_for_;
  mutable std::once_flag once_;
  mutable bool loaded_ = false;
  mutable std::string why_not_;  // why load() failed
};

}  // namespace paes

// `library`'s function `name`, typed as the header that declares it types it:
// PAES_LIBRARY_FUNCTION(lib, clFinish) has the type of &::clFinish.
#define PAES_LIBRARY_FUNCTION(library, name) (library).function<decltype(&::name)>(#name)
// A member of a struct of one library's functions (LibraryFunctions).
#define PAES_LIBRARY_MEMBER(name) decltype(&::name) name = PAES_LIBRARY_FUNCTION(library(), name)

namespace paes {

// The base of a struct of the functions a file calls from one library:
//   struct OpenClFunctions : LibraryFunctions<OpenClFunctions> {
//     static constexpr const char* kSoname = "libOpenCL.so.1";
//     static constexpr const char* kNeededFor = "OpenCL devices are reached ...";
//     PAES_LIBRARY_MEMBER(clFinish);
//   };
// get() opens the library and resolves the functions at its first call.
template <typename Functions>
struct LibraryFunctions {
  static const SharedLibrary& library() {
    static const SharedLibrary lib(Functions::kSoname, Functions::kNeededFor);
    return lib;
  }
  // Throws Error where the library or a function is missing; each later call
  // throws it again.
  static const Functions& get() {
    static const Functions functions;
    return functions;
  }
};

}  // namespace paes
