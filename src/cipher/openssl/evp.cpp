#include "cipher/openssl/evp.hpp"

#include <openssl/err.h>

#include <climits>
#include <string>

#include "paes/error.hpp"

namespace paes {

void throw_openssl_error(const char* what) {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  std::string message = std::string("OpenSSL: ") + what;
  if (code != 0) {
    char reason[256];
    ERR_error_string_n(code, reason, sizeof reason);
    message += std::string(" (") + reason + ")";
  }
  throw Error(message);
}

EvpCipherPtr fetch_aes(Mode mode, std::size_t key_len) {
  check_key_length(key_len);
  static constexpr const char* kSuffix[] = {"ECB", "CBC", "CFB", "CFB8", "CFB1", "OFB", "CTR"};
  const std::string name = "AES-" + std::to_string(key_len * 8) + "-" +
                           kSuffix[static_cast<int>(mode)];
  EvpCipherPtr cipher(EVP_CIPHER_fetch(nullptr, name.c_str(), nullptr));
  if (!cipher) throw_openssl_error(("no cipher " + name).c_str());
  return cipher;
}

EvpCtxPtr make_aes_ctx(const EVP_CIPHER* cipher, const SecretBytes& key, const std::uint8_t* iv,
                       Direction direction, bool evp_padding) {
  EvpCtxPtr ctx(EVP_CIPHER_CTX_new());
  if (!ctx) throw_openssl_error("out of memory for a cipher context");
  const int enc = direction == Direction::encrypt ? 1 : 0;
  if (EVP_CipherInit_ex2(ctx.get(), cipher, key.data(), iv, enc, nullptr) != 1) {
    throw_openssl_error("cipher initialisation failed");
  }
  EVP_CIPHER_CTX_set_padding(ctx.get(), evp_padding ? 1 : 0);
  return ctx;
}

std::size_t evp_update(EVP_CIPHER_CTX* ctx, std::uint8_t* out, const std::uint8_t* in,
                       std::size_t len) {
  // Slices stay block-aligned so no cipher carries a partial block between them.
  constexpr std::size_t kMaxSlice = std::size_t{1} << 30;
  std::size_t produced = 0;
  while (len > 0) {
    const std::size_t slice = len < kMaxSlice ? len : kMaxSlice;
    int out_len = 0;
    if (EVP_CipherUpdate(ctx, out + produced, &out_len, in, static_cast<int>(slice)) != 1) {
      throw_openssl_error("cipher update failed");
    }
    produced += static_cast<std::size_t>(out_len);
    in += slice;
    len -= slice;
  }
  return produced;
}

}  // namespace paes
