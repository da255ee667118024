#include "cipher/kdf.hpp"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>

#include <string>

#include "cipher/openssl/evp.hpp"
#include "paes/error.hpp"

namespace paes {

SecretBytes hkdf_sha256(const SecretBytes& ikm, std::span<const std::uint8_t> salt,
                        std::span<const std::uint8_t> info, std::size_t out_len) {
  EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
  if (!kdf) throw_openssl_error("HKDF is not available");
  EVP_KDF_CTX* ctx = EVP_KDF_CTX_new(kdf);
  EVP_KDF_free(kdf);
  if (!ctx) throw_openssl_error("out of memory for HKDF");
  char digest[] = "SHA256";
  // An empty salt is RFC 5869's default, HashLen zero bytes: given so,
  // since OpenSSL refuses a salt parameter of length 0.
  static const std::uint8_t kZeroSalt[32] = {};
  if (salt.empty()) salt = kZeroSalt;
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<std::uint8_t*>(ikm.data()), ikm.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, const_cast<std::uint8_t*>(salt.data()), salt.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, const_cast<std::uint8_t*>(info.data()), info.size()),
      OSSL_PARAM_construct_end()};
  SecretBytes out(out_len);
  const int ok = EVP_KDF_derive(ctx, out.data(), out.size(), params);
  EVP_KDF_CTX_free(ctx);
  if (ok != 1) throw_openssl_error("HKDF failed");
  return out;
}

std::array<std::uint8_t, 32> hmac_sha256(std::span<const std::uint8_t> key, std::span<const std::uint8_t> data) {
  std::array<std::uint8_t, 32> mac{};
  std::size_t len = 0;
  if (EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, key.data(), key.size(), data.data(), data.size(),
                mac.data(), mac.size(), &len) == nullptr || len != mac.size()) {
    throw_openssl_error("HMAC-SHA256 failed");
  }
  return mac;
}

std::array<std::uint8_t, 32> sha256(std::string_view data) {
  std::array<std::uint8_t, 32> digest{};
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), digest.data(), &len, EVP_sha256(), nullptr) != 1 || len != digest.size()) {
    throw_openssl_error("SHA-256 failed");
  }
  return digest;
}

SecretBytes scrypt_key(const SecretBytes& passphrase, std::span<const std::uint8_t> salt,
                       const ScryptParams& params, std::size_t out_len) {
  if (params.log2_n < 1 || params.log2_n > 30 || params.r == 0 || params.p == 0) {
    throw Error("unsupported scrypt parameters (log2 N " + std::to_string(params.log2_n) +
                ", r " + std::to_string(params.r) + ", p " + std::to_string(params.p) + ")");
  }
  const std::uint64_t n = std::uint64_t{1} << params.log2_n;
  const std::uint64_t memory = scrypt_memory(params);
  if (memory > kMaxScryptMemory) {
    throw Error("scrypt parameters need " + std::to_string(memory >> 20) + " MiB, more than the " +
                std::to_string(kMaxScryptMemory >> 20) + " MiB paes allows");
  }
  SecretBytes out(out_len);
  if (EVP_PBE_scrypt(reinterpret_cast<const char*>(passphrase.data()), passphrase.size(),
                     salt.data(), salt.size(), n, params.r, params.p, kMaxScryptMemory + (1 << 20),
                     out.data(), out.size()) != 1) {
    throw_openssl_error("scrypt failed");
  }
  return out;
}

SecretBytes pbkdf2_sha256(const SecretBytes& passphrase, std::span<const std::uint8_t> salt,
                          std::uint32_t iterations, std::size_t out_len) {
  if (iterations == 0) throw usage_error("--iter must be at least 1");
  SecretBytes out(out_len);
  if (PKCS5_PBKDF2_HMAC(reinterpret_cast<const char*>(passphrase.data()),
                        static_cast<int>(passphrase.size()), salt.data(), static_cast<int>(salt.size()),
                        static_cast<int>(iterations), EVP_sha256(), static_cast<int>(out.size()),
                        out.data()) != 1) {
    throw_openssl_error("PBKDF2 failed");
  }
  return out;
}

void random_bytes(std::span<std::uint8_t> out) {
  if (RAND_bytes(out.data(), static_cast<int>(out.size())) != 1) {
    throw_openssl_error("the random generator failed");
  }
}

}  // namespace paes
