#include "cipher/kdf.hpp"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>

#include "cipher/openssl/evp.hpp"
#include "paes/error.hpp"

namespace paes {

namespace {

constexpr std::size_t kSha256Len = 32;

struct EvpMacFree {
  void operator()(EVP_MAC* mac) const { EVP_MAC_free(mac); }
};
struct EvpMacCtxFree {
  void operator()(EVP_MAC_CTX* ctx) const { EVP_MAC_CTX_free(ctx); }
};

// HMAC-SHA256(key, the concatenation of `parts`) into out[0..32). In pieces
// because HKDF-Expand's T(i) = HMAC(PRK, T(i-1) || info || i): joining them
// would copy a large info once a block and leave the secret T(i-1) in a
// buffer nobody wipes. `out` may alias a part: every part is read before
// anything is written.
void hmac_sha256_into(std::uint8_t* out, std::span<const std::uint8_t> key,
                      std::initializer_list<std::span<const std::uint8_t>> parts) {
  const std::unique_ptr<EVP_MAC, EvpMacFree> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
  if (!mac) throw_openssl_error("HMAC is not available");
  const std::unique_ptr<EVP_MAC_CTX, EvpMacCtxFree> ctx(EVP_MAC_CTX_new(mac.get()));
  if (!ctx) throw_openssl_error("out of memory for HMAC");
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                               OSSL_PARAM_construct_end()};
  // A null key tells EVP_MAC_init to keep the previous key, of which a new
  // context has none; an empty key must still be a key (RFC 5869's default
  // salt: HMAC pads it to the same block as HashLen zero bytes).
  static const std::uint8_t kNoKey = 0;
  const std::uint8_t* key_data = key.empty() ? &kNoKey : key.data();
  if (EVP_MAC_init(ctx.get(), key_data, key.size(), params) != 1) throw_openssl_error("HMAC failed");
  for (const std::span<const std::uint8_t> part : parts) {
    if (!part.empty() && EVP_MAC_update(ctx.get(), part.data(), part.size()) != 1) {
      throw_openssl_error("HMAC failed");
    }
  }
  std::size_t len = 0;
  if (EVP_MAC_final(ctx.get(), out, &len, kSha256Len) != 1 || len != kSha256Len) throw_openssl_error("HMAC failed");
}

// scrypt's memory is its cost: files opened or sealed side by side (a data
// set with a passphrase, 256 MiB each at the default cost) would together
// take more than the machine has. Running scrypts share half the physical
// memory; one that finds too little of it left waits for the others, and
// one alone always runs (its own need is capped by kMaxScryptMemory).
class ScryptMemoryGate {
 public:
  explicit ScryptMemoryGate(std::uint64_t need) : need_(need) {
    std::unique_lock lock(mutex_);
    freed_.wait(lock, [this] { return in_use_ == 0 || in_use_ + need_ <= budget(); });
    in_use_ += need_;
  }
  ~ScryptMemoryGate() {
    {
      const std::lock_guard lock(mutex_);
      in_use_ -= need_;
    }
    freed_.notify_all();
  }
  ScryptMemoryGate(const ScryptMemoryGate&) = delete;
  ScryptMemoryGate& operator=(const ScryptMemoryGate&) = delete;

 private:
  static std::uint64_t budget() {
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page = ::sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return kMaxScryptMemory;
    return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) / 2;
  }
  static inline std::mutex mutex_;
  static inline std::condition_variable freed_;
  static inline std::uint64_t in_use_ = 0;
  const std::uint64_t need_;
};

}  // namespace

std::array<std::uint8_t, 32> hmac_sha256(std::span<const std::uint8_t> key, std::span<const std::uint8_t> data) {
  std::array<std::uint8_t, kSha256Len> out{};
  hmac_sha256_into(out.data(), key, {data});
  return out;
}

SecretBytes hkdf_sha256(const SecretBytes& ikm, std::span<const std::uint8_t> salt,
                        std::span<const std::uint8_t> info, std::size_t out_len) {
  constexpr std::size_t kMaxOutLen = 255 * kSha256Len;  // RFC 5869: the counter is one byte
  if (out_len > kMaxOutLen) {
    throw Error("HKDF-SHA256 cannot derive " + std::to_string(out_len) + " bytes (at most " +
                std::to_string(kMaxOutLen) + ")");
  }
  SecretBytes prk(kSha256Len);
  hmac_sha256_into(prk.data(), salt, {ikm.view()});
  SecretBytes out(out_len);
  SecretBytes block(kSha256Len);  // T(i), fed back as T(i-1)
  for (std::size_t done = 0, i = 1; done < out_len; ++i) {
    const std::uint8_t counter = static_cast<std::uint8_t>(i);
    const std::span<const std::uint8_t> previous = i == 1 ? std::span<const std::uint8_t>{} : block.view();
    hmac_sha256_into(block.data(), prk.view(), {previous, info, {&counter, 1}});
    const std::size_t take = std::min(kSha256Len, out_len - done);
    std::memcpy(out.data() + done, block.data(), take);
    done += take;
  }
  return out;
}

std::array<std::uint8_t, 32> sha256(std::string_view data) {
  std::array<std::uint8_t, 32> digest{};
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), digest.data(), &len, EVP_sha256(), nullptr) != 1 || len != digest.size()) {
    throw_openssl_error("SHA-256 failed");
  }
  return digest;
}

SecretBytes scrypt_key(const SecretBytes& passphrase, std::span<const std::uint8_t> salt,
                       const ScryptParams& params, std::size_t out_len) {
  if (params.log2_n < 1 || params.log2_n > 30 || params.r == 0 || params.p == 0) {
    throw Error("unsupported scrypt parameters (log2 N " + std::to_string(params.log2_n) +
                ", r " + std::to_string(params.r) + ", p " + std::to_string(params.p) + ")");
  }
  const std::uint64_t n = std::uint64_t{1} << params.log2_n;
  const std::uint64_t memory = scrypt_memory(params);
  if (memory > kMaxScryptMemory) {
    throw Error("scrypt parameters need " + std::to_string(memory >> 20) + " MiB, more than the " +
                std::to_string(kMaxScryptMemory >> 30) + " GiB paes allows");
  }
  SecretBytes out(out_len);
  const ScryptMemoryGate gate(memory);
  if (EVP_PBE_scrypt(reinterpret_cast<const char*>(passphrase.data()), passphrase.size(),
                     salt.data(), salt.size(), n, params.r, params.p, kMaxScryptMemory + (1 << 20),
                     out.data(), out.size()) != 1) {
    throw_openssl_error("scrypt failed");
  }
  return out;
}

SecretBytes pbkdf2_hmac(const SecretBytes& passphrase, std::span<const std::uint8_t> salt, std::uint32_t iterations,
                        const std::string& digest, std::size_t out_len) {
  if (iterations == 0) throw usage_error("PBKDF2 needs at least 1 iteration");
  // Fetched from the provider: the table of legacy names that
  // EVP_get_digestbyname reads may be left unfilled (util/openssl_set_up.hpp).
  const EvpMdPtr md(EVP_MD_fetch(nullptr, digest.c_str(), nullptr));
  if (!md) throw usage_error("unknown PBKDF2 digest '" + digest + "'");
  SecretBytes out(out_len);
  if (PKCS5_PBKDF2_HMAC(reinterpret_cast<const char*>(passphrase.data()),
                        static_cast<int>(passphrase.size()), salt.data(), static_cast<int>(salt.size()),
                        static_cast<int>(iterations), md.get(), static_cast<int>(out.size()), out.data()) != 1) {
    throw_openssl_error("PBKDF2 failed");
  }
  return out;
}

SecretBytes pbkdf2_sha256(const SecretBytes& passphrase, std::span<const std::uint8_t> salt,
                          std::uint32_t iterations, std::size_t out_len) {
  return pbkdf2_hmac(passphrase, salt, iterations, "sha256", out_len);
}

void random_bytes(std::span<std::uint8_t> out) {
  if (RAND_bytes(out.data(), static_cast<int>(out.size())) != 1) {
    throw_openssl_error("the random generator failed");
  }
}

}  // namespace paes
