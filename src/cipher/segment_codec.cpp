#include "cipher/segment_codec.hpp"

#include <openssl/err.h>

#include <cstring>
#include <string>

#include "paes/error.hpp"

namespace paes {

SegmentCodec::SegmentCodec(const SecretBytes& segment_key, const NoncePrefix& prefix,
                           Direction direction)
    : prefix_(prefix) {
  const std::string name = segment_key.size() == 16 ? "AES-128-GCM" : "AES-256-GCM";
  cipher_.reset(EVP_CIPHER_fetch(nullptr, name.c_str(), nullptr));
  if (!cipher_) throw_openssl_error("AES-GCM is not available");
  ctx_ = make_aes_ctx(cipher_.get(), segment_key, nullptr, direction, false);
}

void SegmentCodec::start(std::uint32_t index, bool last) {
  std::uint8_t nonce[12];
  std::memcpy(nonce, prefix_.data(), kNoncePrefixLen);
  nonce[7] = static_cast<std::uint8_t>(index >> 24);
  nonce[8] = static_cast<std::uint8_t>(index >> 16);
  nonce[9] = static_cast<std::uint8_t>(index >> 8);
  nonce[10] = static_cast<std::uint8_t>(index);
  nonce[11] = last ? 1 : 0;
  if (EVP_CipherInit_ex2(ctx_.get(), nullptr, nullptr, nonce, -1, nullptr) != 1) {
    throw_openssl_error("GCM nonce setup failed");
  }
}

std::size_t SegmentCodec::seal(std::uint32_t index, bool last, std::uint8_t* out,
                               const std::uint8_t* in, std::size_t len) {
  start(index, last);
  evp_update(ctx_.get(), out, in, len);
  int final_len = 0;
  if (EVP_CipherFinal_ex(ctx_.get(), out + len, &final_len) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx_.get(), EVP_CTRL_AEAD_GET_TAG, kTagLen, out + len) != 1) {
    throw_openssl_error("GCM sealing failed");
  }
  return len + kTagLen;
}

std::size_t SegmentCodec::open(std::uint32_t index, bool last, std::uint8_t* out,
                               const std::uint8_t* in, std::size_t len) {
  if (len < kTagLen) throw Error("truncated: segment " + std::to_string(index) + " is shorter than its tag");
  const std::size_t body = len - kTagLen;
  std::uint8_t tag[kTagLen];
  std::memcpy(tag, in + body, kTagLen);  // before an in-place decrypt could touch it
  start(index, last);
  evp_update(ctx_.get(), out, in, body);
  int final_len = 0;
  if (EVP_CIPHER_CTX_ctrl(ctx_.get(), EVP_CTRL_AEAD_SET_TAG, kTagLen, tag) != 1 ||
      EVP_CipherFinal_ex(ctx_.get(), out + body, &final_len) != 1) {
    ERR_clear_error();
    throw Error("authentication failed at segment " + std::to_string(index) +
                ": wrong key or passphrase, wrong --aad, or the data was corrupted, truncated "
                "or reordered");
  }
  return body;
}

}  // namespace paes
