#include "cipher/oneshot.hpp"

#include "cipher/openssl/evp.hpp"
#include "paes/error.hpp"

namespace paes {

std::size_t openssl_oneshot_into(const CipherSpec& spec, std::uint8_t* out,
                                 std::span<const std::uint8_t> in) {
  const EvpCipherPtr cipher = fetch_aes(spec.mode, spec.key.size());
  const std::uint8_t* iv = mode_uses_iv(spec.mode) ? spec.iv.data() : nullptr;
  const EvpCtxPtr ctx = make_aes_ctx(cipher.get(), spec.key, iv, spec.direction, spec.padded());
  std::size_t produced = evp_update(ctx.get(), out, in.data(), in.size());
  int final_len = 0;
  if (EVP_CipherFinal_ex(ctx.get(), out + produced, &final_len) != 1) {
    throw Error(spec.direction == Direction::decrypt
                    ? "bad decrypt: wrong key or corrupted data"
                    : "input length is not a multiple of 16, which unpadded encryption requires");
  }
  return produced + static_cast<std::size_t>(final_len);
}

std::vector<std::uint8_t> openssl_oneshot(const CipherSpec& spec,
                                          std::span<const std::uint8_t> in) {
  std::vector<std::uint8_t> out(in.size() + kBlockLen);
  out.resize(openssl_oneshot_into(spec, out.data(), in));
  return out;
}

std::size_t openssl_gcm_oneshot_into(const SecretBytes& key, Direction direction, std::uint8_t* out,
                                     std::span<const std::uint8_t> in) {
  constexpr std::size_t kTag = 16;
  const EvpCipherPtr cipher(EVP_CIPHER_fetch(nullptr, key.size() == 16 ? "AES-128-GCM" : "AES-256-GCM", nullptr));
  if (!cipher) throw_openssl_error("AES-GCM is not available");
  const std::uint8_t nonce[12] = {};
  const EvpCtxPtr ctx = make_aes_ctx(cipher.get(), key, nonce, direction, false);
  const bool encrypt = direction == Direction::encrypt;
  if (!encrypt && in.size() < kTag) throw Error("GCM input shorter than its tag");
  const std::size_t body = encrypt ? in.size() : in.size() - kTag;
  evp_update(ctx.get(), out, in.data(), body);
  int final_len = 0;
  if (encrypt) {
    if (EVP_CipherFinal_ex(ctx.get(), out + body, &final_len) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, kTag, out + body) != 1) {
      throw_openssl_error("GCM sealing failed");
    }
    return body + kTag;
  }
  if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG, kTag, const_cast<std::uint8_t*>(in.data() + body)) != 1 ||
      EVP_CipherFinal_ex(ctx.get(), out + body, &final_len) != 1) {
    throw Error("GCM authentication failed");
  }
  return body;
}

}  // namespace paes
