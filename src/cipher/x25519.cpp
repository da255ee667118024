#include "cipher/x25519.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "cipher/openssl/evp.hpp"
#include "paes/error.hpp"

namespace paes {
namespace {

EvpPkeyPtr private_pkey(const SecretBytes& key) {
  if (key.size() != kX25519KeyLen) {
    throw Error("an X25519 private key is 32 bytes, this one has " + std::to_string(key.size()));
  }
  EvpPkeyPtr pkey(EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nullptr, key.data(), key.size()));
  if (!pkey) throw_openssl_error("X25519 is not available");
  return pkey;
}

EvpCtxPtr chacha_ctx(const SecretBytes& key, std::span<const std::uint8_t, 12> nonce, Direction direction) {
  if (key.size() != 32) throw Error("internal: a ChaCha20-Poly1305 key is 32 bytes");
  const EvpCipherPtr cipher(EVP_CIPHER_fetch(nullptr, "ChaCha20-Poly1305", nullptr));
  if (!cipher) throw_openssl_error("ChaCha20-Poly1305 is not available");
  EvpCtxPtr ctx(EVP_CIPHER_CTX_new());
  if (!ctx || EVP_CipherInit_ex2(ctx.get(), cipher.get(), key.data(), nonce.data(),
                                 direction == Direction::encrypt ? 1 : 0, nullptr) != 1) {
    throw_openssl_error("ChaCha20-Poly1305 set-up failed");
  }
  return ctx;
}

// The canonical points of small order, little-endian as X25519 takes them.
constexpr X25519PublicKey kLowOrderPoints[] = {
    {},                                                     // 0 (order 4)
    {1},                                                    // 1 (order 1)
    {0xe0, 0xeb, 0x7a, 0x7c, 0x3b, 0x41, 0xb8, 0xae, 0x16, 0x56, 0xe3, 0xfa, 0xf1, 0x9f, 0xc4, 0x6a,
     0xda, 0x09, 0x8d, 0xeb, 0x9c, 0x32, 0xb1, 0xfd, 0x86, 0x62, 0x05, 0x16, 0x5f, 0x49, 0xb8, 0x00},  // order 8
    {0x5f, 0x9c, 0x95, 0xbc, 0xa3, 0x50, 0x8c, 0x24, 0xb1, 0xd0, 0xb1, 0x55, 0x9c, 0x83, 0xef, 0x5b,
     0x04, 0x44, 0x5c, 0xc4, 0x58, 0x1c, 0x8e, 0x86, 0xd8, 0x22, 0x4e, 0xdd, 0xd0, 0x9f, 0x11, 0x57},  // order 8
    {0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},  // p - 1, order 2
};

}  // namespace

bool is_low_order_point(const X25519PublicKey& point) {
  return std::find(std::begin(kLowOrderPoints), std::end(kLowOrderPoints), point) != std::end(kLowOrderPoints);
}

namespace {

X25519PublicKey public_of(EVP_PKEY* own) {
  X25519PublicKey out{};
  std::size_t len = out.size();
  if (EVP_PKEY_get_raw_public_key(own, out.data(), &len) != 1 || len != out.size()) {
    throw_openssl_error("X25519 public key");
  }
  return out;
}

SecretBytes shared_secret(EVP_PKEY* own, const X25519PublicKey& peer) {
  const EvpPkeyPtr peer_key(EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nullptr, peer.data(), peer.size()));
  if (!peer_key) throw_openssl_error("X25519 public key");
  const EvpPkeyCtxPtr ctx(EVP_PKEY_CTX_new(own, nullptr));
  if (!ctx) throw_openssl_error("out of memory for X25519");
  SecretBytes shared(kX25519KeyLen);
  std::size_t len = shared.size();
  // OpenSSL refuses an all-zero result itself (derive fails); the check after
  // it says so for any OpenSSL that doesn't.
  if (EVP_PKEY_derive_init(ctx.get()) != 1 || EVP_PKEY_derive_set_peer(ctx.get(), peer_key.get()) != 1 ||
      EVP_PKEY_derive(ctx.get(), shared.data(), &len) != 1 || len != shared.size() ||
      std::all_of(shared.data(), shared.data() + len, [](std::uint8_t b) { return b == 0; })) {
    throw Error("X25519 key agreement failed: a low-order public key (its shared secret is all zero)");
  }
  return shared;
}

}  // namespace

X25519PublicKey x25519_public_of(const SecretBytes& private_key) { return public_of(private_pkey(private_key).get()); }

SecretBytes x25519_shared_secret(const SecretBytes& private_key, const X25519PublicKey& peer) {
  return shared_secret(private_pkey(private_key).get(), peer);
}

X25519PrivateKey::X25519PrivateKey(const SecretBytes& key) {
  EvpPkeyPtr pkey = private_pkey(key);
  public_ = public_of(pkey.get());
  key_ = pkey.release();
}

X25519PrivateKey::~X25519PrivateKey() { EVP_PKEY_free(key_); }

X25519PrivateKey::X25519PrivateKey(X25519PrivateKey&& other) noexcept
    : key_(std::exchange(other.key_, nullptr)), public_(other.public_) {}

X25519PrivateKey& X25519PrivateKey::operator=(X25519PrivateKey&& other) noexcept {
  if (this != &other) {
    EVP_PKEY_free(key_);
    key_ = std::exchange(other.key_, nullptr);
    public_ = other.public_;
  }
  return *this;
}

SecretBytes X25519PrivateKey::shared_secret(const X25519PublicKey& peer) const {
  return paes::shared_secret(key_, peer);
}

std::vector<std::uint8_t> chacha20_poly1305_seal(const SecretBytes& key, std::span<const std::uint8_t, 12> nonce,
                                                 std::span<const std::uint8_t> plaintext) {
  const EvpCtxPtr ctx = chacha_ctx(key, nonce, Direction::encrypt);
  std::vector<std::uint8_t> out(plaintext.size() + kPoly1305TagLen);
  const std::size_t len = evp_update(ctx.get(), out.data(), plaintext.data(), plaintext.size());
  int final_len = 0;
  if (len != plaintext.size() || EVP_CipherFinal_ex(ctx.get(), out.data() + len, &final_len) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, kPoly1305TagLen, out.data() + plaintext.size()) != 1) {
    throw_openssl_error("ChaCha20-Poly1305 failed");
  }
  return out;
}

std::optional<SecretBytes> chacha20_poly1305_open(const SecretBytes& key, std::span<const std::uint8_t, 12> nonce,
                                                  std::span<const std::uint8_t> sealed) {
  if (sealed.size() < kPoly1305TagLen) return std::nullopt;
  const std::size_t text_len = sealed.size() - kPoly1305TagLen;
  const EvpCtxPtr ctx = chacha_ctx(key, nonce, Direction::decrypt);
  SecretBytes plain(text_len);
  const std::size_t len = evp_update(ctx.get(), plain.data(), sealed.data(), text_len);
  std::array<std::uint8_t, kPoly1305TagLen> tag{};
  std::copy(sealed.begin() + static_cast<std::ptrdiff_t>(text_len), sealed.end(), tag.begin());
  std::uint8_t none[16];
  int final_len = 0;
  if (len != text_len || EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG, kPoly1305TagLen, tag.data()) != 1 ||
      EVP_CipherFinal_ex(ctx.get(), none, &final_len) != 1) {
    return std::nullopt;
  }
  return plain;
}

}  // namespace paes
