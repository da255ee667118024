#include "paes/secret.hpp"

#include <openssl/crypto.h>

#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <utility>


namespace paes {
namespace {

// OpenSSL's secure heap: one mmap'd arena between guard pages, locked into
// RAM (mlock, where RLIMIT_MEMLOCK allows) so a secret never reaches swap, and
// marked MADV_DONTDUMP so it never reaches a core dump. A power of two, as
// OpenSSL requires; the largest secret paes holds is a passphrase file's
// 64 KiB read buffer, so 1 MiB leaves room for every key of every thread.
constexpr std::size_t kSecureHeapLen = std::size_t{1} << 20;
// The smallest block: a 16-byte key takes one.
constexpr std::size_t kSecureHeapMinBlock = 16;

// Sets the heap up once, on the first secret. When the arena can't be mapped
// at all, OPENSSL_secure_zalloc falls back to the ordinary heap, and when it
// is full it returns null: both are handled in allocate().
void ensure_secure_heap() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (CRYPTO_secure_malloc_initialized() == 0) {
      CRYPTO_secure_malloc_init(kSecureHeapLen, kSecureHeapMinBlock);
    }
  });
}

std::uint8_t* allocate(std::size_t len) {
  if (len == 0) return nullptr;
  ensure_secure_heap();
  void* p = OPENSSL_secure_zalloc(len);
  // A full arena still gets a wiped secret, just not a locked one.
  if (p == nullptr) p = OPENSSL_zalloc(len);
  if (p == nullptr) throw std::bad_alloc();
  return static_cast<std::uint8_t*>(p);
}

}  // namespace

SecretBytes::SecretBytes(std::size_t len) : bytes_(allocate(len)), len_(len) {}

SecretBytes::SecretBytes(const std::uint8_t* data, std::size_t len) : SecretBytes(len) {
  if (len != 0) std::memcpy(bytes_, data, len);
}

SecretBytes::~SecretBytes() { release(); }

SecretBytes::SecretBytes(SecretBytes&& other) noexcept
    : bytes_(std::exchange(other.bytes_, nullptr)), len_(std::exchange(other.len_, 0)) {}

SecretBytes& SecretBytes::operator=(SecretBytes&& other) noexcept {
  if (this != &other) {
    release();
    bytes_ = std::exchange(other.bytes_, nullptr);
    len_ = std::exchange(other.len_, 0);
  }
  return *this;
}


// OPENSSL_secure_clear_free wipes before freeing, and frees blocks from either
// heap (it asks CRYPTO_secure_allocated which one holds the pointer).
void SecretBytes::release() noexcept {
  if (bytes_ != nullptr) OPENSSL_secure_clear_free(bytes_, len_);
  bytes_ = nullptr;
  len_ = 0;
}

void wipe(std::span<std::uint8_t> bytes) noexcept { OPENSSL_cleanse(bytes.data(), bytes.size()); }

void wipe(std::string& text) noexcept {
  OPENSSL_cleanse(text.data(), text.size());
  text.clear();
}

}  // namespace paes
