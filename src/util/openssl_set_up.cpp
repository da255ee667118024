#include "util/openssl_set_up.hpp"

#include <openssl/crypto.h>

#include <cstdint>
#include <cstdlib>

namespace paes {

void set_up_openssl_for_one_command() {
  std::uint64_t options = OPENSSL_INIT_NO_ATEXIT | OPENSSL_INIT_NO_ADD_ALL_CIPHERS |
                          OPENSSL_INIT_NO_ADD_ALL_DIGESTS | OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS;
  if (const char* conf = std::getenv("OPENSSL_CONF"); conf == nullptr || *conf == '\0') {
    options |= OPENSSL_INIT_NO_LOAD_CONFIG;
  }
  OPENSSL_init_crypto(options, nullptr);
}

}  // namespace paes
