#include "cipher/oneshot.hpp"

#include "cipher/evp.hpp"
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
                    : "input length is not a multiple of 16, which --no-pad requires");
  }
  return produced + static_cast<std::size_t>(final_len);
}

std::vector<std::uint8_t> openssl_oneshot(const CipherSpec& spec,
                                          std::span<const std::uint8_t> in) {
  std::vector<std::uint8_t> out(in.size() + kBlockLen);
  out.resize(openssl_oneshot_into(spec, out.data(), in));
  return out;
}

}  // namespace paes
