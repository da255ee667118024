// OpenSSL's EVP as a cipher backend: every raw mode and AES-GCM, on every CPU
// (AES-NI or VAES where there is one, OpenSSL's own constant-time code where
// there isn't). Only cipher/backends.cpp names it.
#pragma once

#include "cipher/backend.hpp"

namespace paes {

const CipherBackend& openssl_backend();

}  // namespace paes
