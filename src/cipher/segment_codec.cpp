#include "cipher/segment_codec.hpp"

#include <openssl/evp.h>

#include <cstring>
#include <string>

#include "cipher/openssl/evp.hpp"
#include "paes/error.hpp"

namespace paes {

std::size_t SegmentCodec::seal(std::uint64_t index, bool last, std::uint8_t* out, const std::uint8_t* in,
                               std::size_t len) {
  seal_segment(index, last, out, in, len);
  return len + kTagLen;
}

std::size_t SegmentCodec::open(std::uint64_t index, bool last, std::uint8_t* out, const std::uint8_t* in,
                               std::size_t len) {
  const std::string unit = unit_;
  if (len < kTagLen) throw Error("truncated: " + unit + " " + std::to_string(index) + " is shorter than its tag");
  if (!open_segment(index, last, out, in, len)) {
    throw SegmentAuthenticationError("authentication failed at " + unit + " " + std::to_string(index) + ": " +
                                         causes_,
                                     index, remedy_);
  }
  return len - kTagLen;
}

TinkSegmentCodec::TinkSegmentCodec(const CipherBackend& backend, const SecretBytes& segment_key,
                                   const NoncePrefix& prefix, Direction direction)
    : SegmentCodec("segment",
                   "wrong key or passphrase, wrong associated data, or the data was corrupted, truncated or reordered",
                   Remedy::associated_data),
      prefix_(prefix), aead_(backend.make_segment(segment_key, direction)) {}

GcmNonce TinkSegmentCodec::nonce(std::uint64_t index, bool last) const {
  GcmNonce nonce;
  std::memcpy(nonce.data(), prefix_.data(), kNoncePrefixLen);
  nonce[7] = static_cast<std::uint8_t>(index >> 24);
  nonce[8] = static_cast<std::uint8_t>(index >> 16);
  nonce[9] = static_cast<std::uint8_t>(index >> 8);
  nonce[10] = static_cast<std::uint8_t>(index);
  nonce[11] = last ? 1 : 0;
  return nonce;
}

void TinkSegmentCodec::seal_segment(std::uint64_t index, bool last, std::uint8_t* out, const std::uint8_t* in,
                                    std::size_t len) {
  aead_->seal(nonce(index, last), out, in, len);
}

bool TinkSegmentCodec::open_segment(std::uint64_t index, bool last, std::uint8_t* out, const std::uint8_t* in,
                                    std::size_t len) {
  return aead_->open(nonce(index, last), out, in, len);
}

// One context, keyed once: each chunk sets only its nonce.
struct AgeChunkCodec::Evp {
  EvpCtxPtr ctx;
};

AgeChunkCodec::AgeChunkCodec(const SecretBytes& payload_key, Direction direction)
    : SegmentCodec("chunk",
                   "the age file was corrupted, truncated or reordered after its header (whose MAC verified the key)",
                   Remedy::none),
      evp_(std::make_unique<Evp>()) {
  if (payload_key.size() != 32) throw Error("internal: age's payload key is 32 bytes");
  const EvpCipherPtr cipher(EVP_CIPHER_fetch(nullptr, "ChaCha20-Poly1305", nullptr));
  if (!cipher) throw_openssl_error("ChaCha20-Poly1305 is not available");
  evp_->ctx.reset(EVP_CIPHER_CTX_new());
  if (!evp_->ctx || EVP_CipherInit_ex2(evp_->ctx.get(), cipher.get(), payload_key.data(), nullptr,
                                       direction == Direction::encrypt ? 1 : 0, nullptr) != 1) {
    throw_openssl_error("ChaCha20-Poly1305 set-up failed");
  }
}

AgeChunkCodec::~AgeChunkCodec() = default;

namespace {

// age.md: the nonce is the chunk's counter as 11 big-endian bytes, then 1
// for the last chunk and 0 before it.
std::array<std::uint8_t, 12> age_nonce(std::uint64_t index, bool last) {
  std::array<std::uint8_t, 12> nonce{};
  for (int i = 0; i < 8; ++i) nonce[10 - i] = static_cast<std::uint8_t>(index >> (8 * i));
  nonce[11] = last ? 1 : 0;
  return nonce;
}

}  // namespace

void AgeChunkCodec::seal_segment(std::uint64_t index, bool last, std::uint8_t* out, const std::uint8_t* in,
                                 std::size_t len) {
  EVP_CIPHER_CTX* ctx = evp_->ctx.get();
  const auto nonce = age_nonce(index, last);
  int final_len = 0;
  if (EVP_CipherInit_ex2(ctx, nullptr, nullptr, nonce.data(), 1, nullptr) != 1 ||
      evp_update(ctx, out, in, len) != len || EVP_CipherFinal_ex(ctx, out + len, &final_len) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, static_cast<int>(kTagLen), out + len) != 1) {
    throw_openssl_error("ChaCha20-Poly1305 failed");
  }
}

bool AgeChunkCodec::open_segment(std::uint64_t index, bool last, std::uint8_t* out, const std::uint8_t* in,
                                 std::size_t len) {
  EVP_CIPHER_CTX* ctx = evp_->ctx.get();
  const auto nonce = age_nonce(index, last);
  const std::size_t text_len = len - kTagLen;
  // The tag is copied first: `out` may be `in`, and decrypting in place
  // writes over nothing past the text, but the tag must be set before Final.
  std::array<std::uint8_t, kTagLen> tag{};
  std::memcpy(tag.data(), in + text_len, kTagLen);
  std::uint8_t none[16];
  int final_len = 0;
  if (EVP_CipherInit_ex2(ctx, nullptr, nullptr, nonce.data(), 0, nullptr) != 1 ||
      evp_update(ctx, out, in, text_len) != text_len) {
    throw_openssl_error("ChaCha20-Poly1305 failed");
  }
  return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, static_cast<int>(kTagLen), tag.data()) == 1 &&
         EVP_CipherFinal_ex(ctx, none, &final_len) == 1;
}

}  // namespace paes
