#include "cipher/ssh_crypto.hpp"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <sodium.h>

#include <memory>
#include <mutex>
#include <utility>

#include "cipher/openssl/evp.hpp"
#include "paes/error.hpp"
#include "util/shared_library.hpp"

namespace paes {
namespace {

struct BignumFree {
  void operator()(BIGNUM* n) const { BN_clear_free(n); }
};
struct BnCtxFree {
  void operator()(BN_CTX* ctx) const { BN_CTX_free(ctx); }
};
struct ParamBuildFree {
  void operator()(OSSL_PARAM_BLD* build) const { OSSL_PARAM_BLD_free(build); }
};
// OSSL_PARAM_BLD puts the private numbers (secure BIGNUMs) in the secure
// heap, which OSSL_PARAM_free clears as it frees.
struct ParamsFree {
  void operator()(OSSL_PARAM* params) const { OSSL_PARAM_free(params); }
};
struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct Pkcs8Free {
  void operator()(PKCS8_PRIV_KEY_INFO* info) const { PKCS8_PRIV_KEY_INFO_free(info); }
};
using BignumPtr = std::unique_ptr<BIGNUM, BignumFree>;
using ParamBuildPtr = std::unique_ptr<OSSL_PARAM_BLD, ParamBuildFree>;
using ParamsPtr = std::unique_ptr<OSSL_PARAM, ParamsFree>;

// libsodium's functions, from libsodium.so.23 opened at the first Ed25519
// ssh key, and initialised there: it picks its implementations once
// (sodium_init is safe to call from several threads, but once is enough).
// Throws Error where it is missing.
struct SodiumFunctions : LibraryFunctions<SodiumFunctions> {
  static constexpr const char* kSoname = "libsodium.so.23";
  static constexpr const char* kNeededFor = "Ed25519 ssh keys are converted with libsodium";
  SodiumFunctions() {
    if (sodium_init() < 0) throw Error("libsodium failed to initialise");
  }
  PAES_LIBRARY_MEMBER(sodium_init);
  PAES_LIBRARY_MEMBER(crypto_sign_ed25519_pk_to_curve25519);
  PAES_LIBRARY_MEMBER(crypto_sign_ed25519_sk_to_curve25519);
};

const SodiumFunctions& sodium() { return SodiumFunctions::get(); }

// A number in secure memory, computed in constant time, for the private
// ones; public numbers take the same path, which costs nothing here.
BignumPtr bignum_of(std::span<const std::uint8_t> big_endian) {
  BignumPtr n(BN_secure_new());
  if (!n || BN_bin2bn(big_endian.data(), static_cast<int>(big_endian.size()), n.get()) == nullptr) {
    throw_openssl_error("out of memory for an RSA number");
  }
  BN_set_flags(n.get(), BN_FLG_CONSTTIME);
  return n;
}

EvpPkeyPtr rsa_from_params(OSSL_PARAM_BLD* build, int selection) {
  const ParamsPtr params(OSSL_PARAM_BLD_to_param(build));
  const EvpPkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr));
  EVP_PKEY* key = nullptr;
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
      EVP_PKEY_fromdata(ctx.get(), &key, selection, params.get()) != 1) {
    throw_openssl_error("not a usable RSA key");
  }
  return EvpPkeyPtr(key);
}

// A context for RSA-OAEP with SHA-256 for both hashes and `label`, set up
// by `init` (EVP_PKEY_encrypt_init or EVP_PKEY_decrypt_init).
EvpPkeyCtxPtr oaep_ctx(EVP_PKEY* key, int (*init)(EVP_PKEY_CTX*), std::string_view label) {
  EvpPkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, key, nullptr));
  if (!ctx || init(ctx.get()) != 1 || EVP_PKEY_CTX_set_rsa_padding(ctx.get(), RSA_PKCS1_OAEP_PADDING) != 1 ||
      EVP_PKEY_CTX_set_rsa_oaep_md(ctx.get(), EVP_sha256()) != 1 ||
      EVP_PKEY_CTX_set_rsa_mgf1_md(ctx.get(), EVP_sha256()) != 1) {
    throw_openssl_error("RSA-OAEP set-up failed");
  }
  // OpenSSL takes the label's memory over.
  void* owned_label = OPENSSL_memdup(label.data(), label.size());
  const int label_len = static_cast<int>(label.size());
  if (owned_label == nullptr || EVP_PKEY_CTX_set0_rsa_oaep_label(ctx.get(), owned_label, label_len) != 1) {
    OPENSSL_free(owned_label);
    throw_openssl_error("RSA-OAEP label");
  }
  return ctx;
}

// Refuses an inconsistent key (n != p * q, d not e's inverse, ...), as age's
// RSA identities are validated, then writes it as PKCS#8 DER.
SecretBytes checked_pkcs8_der(EVP_PKEY* key) {
  if (EVP_PKEY_is_a(key, "RSA") != 1) throw Error("not an RSA private key");
  const EvpPkeyCtxPtr check(EVP_PKEY_CTX_new_from_pkey(nullptr, key, nullptr));
  if (!check || EVP_PKEY_pairwise_check(check.get()) != 1) {
    throw_openssl_error("the RSA private key is not consistent");
  }
  const std::unique_ptr<PKCS8_PRIV_KEY_INFO, Pkcs8Free> info(EVP_PKEY2PKCS8(key));
  const int len = info ? i2d_PKCS8_PRIV_KEY_INFO(info.get(), nullptr) : -1;
  if (len <= 0) throw_openssl_error("RSA private key encoding");
  SecretBytes der(static_cast<std::size_t>(len));
  unsigned char* out = der.data();
  if (i2d_PKCS8_PRIV_KEY_INFO(info.get(), &out) != len) throw_openssl_error("RSA private key encoding");
  return der;
}

}  // namespace

X25519PublicKey ed25519_public_to_x25519(std::span<const std::uint8_t, kEd25519PublicKeyLen> public_key) {
  X25519PublicKey out{};
  if (sodium().crypto_sign_ed25519_pk_to_curve25519(out.data(), public_key.data()) != 0) {
    throw Error("not a usable Ed25519 public key (not a point of the curve's prime-order group)");
  }
  return out;
}

SecretBytes ed25519_secret_to_x25519(const SecretBytes& secret_key) {
  if (secret_key.size() != kEd25519SecretKeyLen) throw Error("internal: an Ed25519 secret key is 64 bytes");
  SecretBytes out(crypto_scalarmult_curve25519_BYTES);
  if (sodium().crypto_sign_ed25519_sk_to_curve25519(out.data(), secret_key.data()) != 0) {
    throw Error("libsodium: Ed25519 to X25519 conversion failed");
  }
  return out;
}

std::vector<std::uint8_t> rsa_oaep_sha256_encrypt(const RsaPublicNumbers& key, std::string_view label,
                                                  std::span<const std::uint8_t> plaintext) {
  const BignumPtr n = bignum_of(key.modulus);
  const BignumPtr e = bignum_of(key.exponent);
  const ParamBuildPtr build(OSSL_PARAM_BLD_new());
  if (!build || OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_N, n.get()) != 1 ||
      OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_E, e.get()) != 1) {
    throw_openssl_error("out of memory for an RSA key");
  }
  const EvpPkeyPtr pkey = rsa_from_params(build.get(), EVP_PKEY_PUBLIC_KEY);
  const EvpPkeyCtxPtr ctx = oaep_ctx(pkey.get(), EVP_PKEY_encrypt_init, label);
  std::size_t len = 0;
  if (EVP_PKEY_encrypt(ctx.get(), nullptr, &len, plaintext.data(), plaintext.size()) != 1) {
    throw_openssl_error("RSA-OAEP encryption failed");
  }
  std::vector<std::uint8_t> out(len);
  if (EVP_PKEY_encrypt(ctx.get(), out.data(), &len, plaintext.data(), plaintext.size()) != 1) {
    throw_openssl_error("RSA-OAEP encryption failed");
  }
  out.resize(len);
  return out;
}

std::optional<SecretBytes> rsa_oaep_sha256_decrypt(const SecretBytes& private_key_der, std::string_view label,
                                                   std::span<const std::uint8_t> ciphertext) {
  const unsigned char* in = private_key_der.data();
  const EvpPkeyPtr pkey(d2i_AutoPrivateKey(nullptr, &in, static_cast<long>(private_key_der.size())));
  if (!pkey || EVP_PKEY_is_a(pkey.get(), "RSA") != 1) throw_openssl_error("not an RSA private key");
  const EvpPkeyCtxPtr ctx = oaep_ctx(pkey.get(), EVP_PKEY_decrypt_init, label);
  std::size_t len = 0;
  if (EVP_PKEY_decrypt(ctx.get(), nullptr, &len, ciphertext.data(), ciphertext.size()) != 1) {
    throw_openssl_error("RSA-OAEP decryption failed");
  }
  SecretBytes out(len);
  if (EVP_PKEY_decrypt(ctx.get(), out.data(), &len, ciphertext.data(), ciphertext.size()) != 1) {
    // The padding check failed: another key, or a damaged body. What OpenSSL
    // says of why is no business of the caller's (it would be an oracle).
    ERR_clear_error();
    return std::nullopt;
  }
  return SecretBytes(out.data(), len);
}

SecretBytes rsa_private_key_from_numbers(const RsaPrivateNumbers& numbers) {
  const BignumPtr n = bignum_of(numbers.modulus);
  const BignumPtr e = bignum_of(numbers.public_exponent);
  const BignumPtr d = bignum_of(numbers.private_exponent);
  const BignumPtr p = bignum_of(numbers.p);
  const BignumPtr q = bignum_of(numbers.q);
  const BignumPtr iqmp = bignum_of(numbers.iqmp);
  // OpenSSH keeps no CRT exponents; PKCS#8 has them: d mod (p - 1), d mod (q - 1).
  const std::unique_ptr<BN_CTX, BnCtxFree> bn_ctx(BN_CTX_secure_new());
  const BignumPtr p_minus_1(BN_secure_new()), q_minus_1(BN_secure_new());
  const BignumPtr dmp1(BN_secure_new()), dmq1(BN_secure_new());
  if (!bn_ctx || !p_minus_1 || !q_minus_1 || !dmp1 || !dmq1 || BN_sub(p_minus_1.get(), p.get(), BN_value_one()) != 1 ||
      BN_sub(q_minus_1.get(), q.get(), BN_value_one()) != 1 ||
      BN_mod(dmp1.get(), d.get(), p_minus_1.get(), bn_ctx.get()) != 1 ||
      BN_mod(dmq1.get(), d.get(), q_minus_1.get(), bn_ctx.get()) != 1) {
    throw_openssl_error("RSA CRT exponents");
  }
  const ParamBuildPtr build(OSSL_PARAM_BLD_new());
  const std::pair<const char*, const BIGNUM*> params[] = {
      {OSSL_PKEY_PARAM_RSA_N, n.get()},           {OSSL_PKEY_PARAM_RSA_E, e.get()},
      {OSSL_PKEY_PARAM_RSA_D, d.get()},           {OSSL_PKEY_PARAM_RSA_FACTOR1, p.get()},
      {OSSL_PKEY_PARAM_RSA_FACTOR2, q.get()},     {OSSL_PKEY_PARAM_RSA_EXPONENT1, dmp1.get()},
      {OSSL_PKEY_PARAM_RSA_EXPONENT2, dmq1.get()}, {OSSL_PKEY_PARAM_RSA_COEFFICIENT1, iqmp.get()},
  };
  if (!build) throw_openssl_error("out of memory for an RSA key");
  for (const auto& [name, value] : params) {
    if (OSSL_PARAM_BLD_push_BN(build.get(), name, value) != 1) throw_openssl_error("out of memory for an RSA key");
  }
  const EvpPkeyPtr pkey = rsa_from_params(build.get(), EVP_PKEY_KEYPAIR);
  return checked_pkcs8_der(pkey.get());
}

void name_pem_key_ciphers() {
  for (const EVP_CIPHER* cipher : {EVP_aes_128_cbc(), EVP_aes_192_cbc(), EVP_aes_256_cbc(), EVP_des_ede3_cbc()}) {
    if (EVP_add_cipher(cipher) != 1) throw_openssl_error("naming a PEM key's cipher");
  }
}

SecretBytes rsa_private_key_from_pem(const SecretBytes& pem) {
  const std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) throw_openssl_error("out of memory for a PEM key");
  // An empty passphrase callback: the PEM is unencrypted, and OpenSSL must
  // never fall back to asking on the terminal.
  const auto no_passphrase = [](char*, int, int, void*) { return 0; };
  const EvpPkeyPtr pkey(PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr));
  if (!pkey) throw_openssl_error("not a PEM private key");
  return checked_pkcs8_der(pkey.get());
}

}  // namespace paes
