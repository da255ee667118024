// Small owning wrappers over OpenSSL EVP objects: the OpenSSL backend's, also
// used by the KDFs (kdf.cpp) and the oracle (oneshot.cpp), which are OpenSSL's
// whatever backend runs the AES.
#pragma once

#include <openssl/evp.h>

#include <memory>

#include "paes/mode.hpp"

namespace paes {

struct EvpCipherFree {
  void operator()(EVP_CIPHER* cipher) const { EVP_CIPHER_free(cipher); }
};
struct EvpCtxFree {
  void operator()(EVP_CIPHER_CTX* ctx) const { EVP_CIPHER_CTX_free(ctx); }
};
struct EvpMdFree {
  void operator()(EVP_MD* md) const { EVP_MD_free(md); }
};
struct EvpPkeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct EvpPkeyCtxFree {
  void operator()(EVP_PKEY_CTX* ctx) const { EVP_PKEY_CTX_free(ctx); }
};
using EvpCipherPtr = std::unique_ptr<EVP_CIPHER, EvpCipherFree>;
using EvpCtxPtr = std::unique_ptr<EVP_CIPHER_CTX, EvpCtxFree>;
using EvpMdPtr = std::unique_ptr<EVP_MD, EvpMdFree>;
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, EvpPkeyFree>;  // X25519 keys (cipher/x25519.cpp)
using EvpPkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, EvpPkeyCtxFree>;

// Fetches AES-<key bits>-<mode> once, so per-chunk inits skip the name lookup.
EvpCipherPtr fetch_aes(Mode mode, std::size_t key_len);

// A context keyed for `direction` with `iv` (null for ECB), EVP padding off
// unless `evp_padding`. Throws Error when OpenSSL refuses.
EvpCtxPtr make_aes_ctx(const EVP_CIPHER* cipher, const SecretBytes& key, const std::uint8_t* iv,
                       Direction direction, bool evp_padding);

// EVP_CipherUpdate for lengths beyond INT_MAX. Throws Error on failure.
std::size_t evp_update(EVP_CIPHER_CTX* ctx, std::uint8_t* out, const std::uint8_t* in,
                       std::size_t len);

// Throws an Error that carries OpenSSL's reason for the last failure.
[[noreturn]] void throw_openssl_error(const char* what);

}  // namespace paes
