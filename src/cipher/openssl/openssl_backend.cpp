// The OpenSSL backend: one EVP context per thread, keyed once, EVP's own
// padding off so a chunk can start and stop at any block (PKCS#7 is applied
// above, in padded_update). CFB128 decryption runs as an ECB keystream
// (cipher/ecb_keystream.hpp).
#include "cipher/openssl/openssl_backend.hpp"

#include <openssl/crypto.h>
#include <openssl/err.h>

#include <cstring>
#include <string>

#include "cipher/ecb_keystream.hpp"
#include "cipher/openssl/evp.hpp"

namespace paes {
namespace {

// Every raw mode through EVP's own implementation of it.
class EvpRawCipher final : public RawCipher {
 public:
  explicit EvpRawCipher(const CipherSpec& spec)
      : mode_(spec.mode), cipher_(fetch_aes(spec.mode, spec.key.size())) {
    const std::uint8_t* iv = spec.mode == Mode::ecb ? nullptr : spec.iv.data();
    ctx_ = make_aes_ctx(cipher_.get(), spec.key, iv, spec.direction, false);
  }

  void begin(const Block& start_state) override {
    if (mode_ == Mode::ecb) return;
    // A null key keeps the expanded key; only the IV and the partial-block state reset.
    if (EVP_CipherInit_ex2(ctx_.get(), nullptr, nullptr, start_state.data(), -1, nullptr) != 1) {
      throw_openssl_error("cipher IV reset failed");
    }
  }

  void update(std::uint8_t* out, const std::uint8_t* in, std::size_t len) override {
    evp_update(ctx_.get(), out, in, len);
  }

  const char* implementation() const override { return "openssl-evp"; }

 private:
  Mode mode_;
  EvpCipherPtr cipher_;
  EvpCtxPtr ctx_;
};

// CFB128 decryption over EVP's interleaved ECB.
class EvpCfb128Decrypt final : public EcbKeystreamCfb128Decrypt {
 public:
  explicit EvpCfb128Decrypt(const CipherSpec& spec)
      : cipher_(fetch_aes(Mode::ecb, spec.key.size())),
        ctx_(make_aes_ctx(cipher_.get(), spec.key, nullptr, Direction::encrypt, false)) {}

  const char* implementation() const override { return "openssl-ecb-keystream"; }

 private:
  void ecb_encrypt(std::uint8_t* out, const std::uint8_t* in, std::size_t len) override {
    evp_update(ctx_.get(), out, in, len);
  }

  EvpCipherPtr cipher_;
  EvpCtxPtr ctx_;
};

class EvpGcm final : public SegmentAead {
 public:
  EvpGcm(const SecretBytes& key, Direction direction) {
    cipher_.reset(EVP_CIPHER_fetch(nullptr, key.size() == 16 ? "AES-128-GCM" : "AES-256-GCM", nullptr));
    if (!cipher_) throw_openssl_error("AES-GCM is not available");
    ctx_ = make_aes_ctx(cipher_.get(), key, nullptr, direction, false);
  }

  void seal(const GcmNonce& nonce, std::uint8_t* out, const std::uint8_t* in,
            std::size_t len) override {
    start(nonce);
    evp_update(ctx_.get(), out, in, len);
    int final_len = 0;
    if (EVP_CipherFinal_ex(ctx_.get(), out + len, &final_len) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx_.get(), EVP_CTRL_AEAD_GET_TAG, kTagLen, out + len) != 1) {
      throw_openssl_error("GCM sealing failed");
    }
  }

  bool open(const GcmNonce& nonce, std::uint8_t* out, const std::uint8_t* in,
            std::size_t len) override {
    const std::size_t body = len - kTagLen;
    std::uint8_t tag[kTagLen];
    std::memcpy(tag, in + body, kTagLen);  // before an in-place decrypt could touch it
    start(nonce);
    evp_update(ctx_.get(), out, in, body);
    int final_len = 0;
    if (EVP_CIPHER_CTX_ctrl(ctx_.get(), EVP_CTRL_AEAD_SET_TAG, kTagLen, tag) != 1 ||
        EVP_CipherFinal_ex(ctx_.get(), out + body, &final_len) != 1) {
      ERR_clear_error();
      return false;
    }
    return true;
  }

  const char* implementation() const override { return "openssl-evp"; }

 private:
  void start(const GcmNonce& nonce) {
    if (EVP_CipherInit_ex2(ctx_.get(), nullptr, nullptr, nonce.data(), -1, nullptr) != 1) {
      throw_openssl_error("GCM nonce setup failed");
    }
  }

  EvpCipherPtr cipher_;
  EvpCtxPtr ctx_;
};

class OpenSslBackend final : public CipherBackend {
 public:
  std::string_view name() const override { return "openssl"; }
  bool available() const override { return true; }
  bool runs(Mode, Direction) const override { return true; }
  bool chosen_by_auto() const override { return true; }
  std::string auto_rule() const override { return "for what the others don't run"; }
  std::string detail() const override { return OpenSSL_version(OPENSSL_VERSION); }

 private:
  std::unique_ptr<RawCipher> do_make_raw(const CipherSpec& spec) const override {
    if (spec.mode == Mode::cfb128 && spec.direction == Direction::decrypt) {
      return std::make_unique<EvpCfb128Decrypt>(spec);
    }
    return std::make_unique<EvpRawCipher>(spec);
  }
  std::unique_ptr<SegmentAead> do_make_segment(const SecretBytes& key,
                                               Direction direction) const override {
    return std::make_unique<EvpGcm>(key, direction);
  }
};

}  // namespace

const CipherBackend& openssl_backend() {
  static const OpenSslBackend backend;
  return backend;
}

}  // namespace paes
