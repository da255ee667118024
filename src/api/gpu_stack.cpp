#include "api/gpu_stack.hpp"

#include <dlfcn.h>

#include <span>

#include "cipher/kdf.hpp"
#include "cipher/backend.hpp"
#include "cipher/gpu/gpu_backend.hpp"
#include "util/hex.hpp"
#include "util/stack_facts.hpp"

namespace paes {
std::string gpu_stack_fingerprint() {
  // The code whose speed was measured: the library or program this function
  // lies in, so a rebuilt or upgraded paes measures again.
  std::string facts = "backends:";
  for (const CipherBackend* backend : cipher_backends()) facts.append(" ").append(backend->name());
  facts += '\n';
  if (Dl_info self{}; ::dladdr(reinterpret_cast<void*>(&gpu_stack_fingerprint), &self) != 0 && self.dli_fname) {
    add_stat(facts, self.dli_fname);
  }
  for (const char* var : {"LD_PRELOAD", "LD_LIBRARY_PATH"}) add_variable(facts, var);
  // Each GPU API's own: its device nodes, driver files, ICDs and variables.
  for (const GpuApi& api : gpu_apis()) {
    if (api.stack_facts) facts += api.stack_facts();
  }
  const auto digest = sha256(facts);
  return encode_hex(std::span(digest).first(8));
}

}  // namespace paes
