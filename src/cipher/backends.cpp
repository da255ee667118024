// The one place paes chooses which library runs AES on the CPU. The table
// lists every backend this build has, in order of preference; a job takes the
// first that is available and runs its work. A new backend (Intel ipsec-mb,
// issue #13) is its folder beside cipher/openssl/, one row here (before
// OpenSSL where it is faster; its available() says whether this CPU can run
// it) and its tests (tests/unit/backend_test.cpp runs every row).
#include <string>

#include "cipher/backend.hpp"
#include "cipher/openssl/openssl_backend.hpp"
#include "paes/error.hpp"

namespace paes {

std::span<const CipherBackend* const> cipher_backends() {
  static const CipherBackend* const kBackends[] = {
      &openssl_backend(),
  };
  return kBackends;
}

const CipherBackend& choose_raw_backend(Mode mode, Direction direction) {
  for (const CipherBackend* backend : cipher_backends()) {
    if (backend->available() && backend->runs(mode, direction)) return *backend;
  }
  throw Error("no cipher backend runs AES-" + std::string(mode_name(mode)) + " " +
              std::string(direction_name(direction)));
}

const CipherBackend& choose_segment_backend() {
  for (const CipherBackend* backend : cipher_backends()) {
    if (backend->available()) return *backend;
  }
  throw Error("no cipher backend runs AES-GCM");
}

}  // namespace paes
