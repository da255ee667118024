#include "paes/secret.hpp"

#include <openssl/crypto.h>

#include <cstring>
#include <utility>

namespace paes {

SecretBytes::SecretBytes(std::size_t len) : bytes_(new std::uint8_t[len]()), len_(len) {}

SecretBytes::SecretBytes(const std::uint8_t* data, std::size_t len) : SecretBytes(len) {
  if (len != 0) std::memcpy(bytes_.get(), data, len);
}

SecretBytes::~SecretBytes() { wipe(); }

SecretBytes::SecretBytes(SecretBytes&& other) noexcept
    : bytes_(std::move(other.bytes_)), len_(std::exchange(other.len_, 0)) {}

SecretBytes& SecretBytes::operator=(SecretBytes&& other) noexcept {
  if (this != &other) {
    wipe();
    bytes_ = std::move(other.bytes_);
    len_ = std::exchange(other.len_, 0);
  }
  return *this;
}

void SecretBytes::wipe() noexcept {
  if (bytes_ && len_ != 0) OPENSSL_cleanse(bytes_.get(), len_);
}

}  // namespace paes
