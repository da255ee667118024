#include "util/openssl_set_up.hpp"

#include <openssl/crypto.h>

#include <cstdint>
#include <cstdlib>

// AddressSanitizer's leak checker runs at exit and reports what OpenSSL's
// clean-up would have freed (a thread's random generators, kept where the
// checker doesn't look) as leaked: under it, the clean-up runs.
#if defined(__SANITIZE_ADDRESS__)
#define PAES_LEAKS_CHECKED_AT_EXIT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PAES_LEAKS_CHECKED_AT_EXIT 1
#endif
#endif

namespace paes {

void set_up_openssl_for_one_command() {
  std::uint64_t options =
      OPENSSL_INIT_NO_ADD_ALL_CIPHERS | OPENSSL_INIT_NO_ADD_ALL_DIGESTS | OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS;
#ifndef PAES_LEAKS_CHECKED_AT_EXIT
  options |= OPENSSL_INIT_NO_ATEXIT;
#endif
  if (const char* conf = std::getenv("OPENSSL_CONF"); conf == nullptr || *conf == '\0') {
    options |= OPENSSL_INIT_NO_LOAD_CONFIG;
  }
  OPENSSL_init_crypto(options, nullptr);
}

}  // namespace paes
