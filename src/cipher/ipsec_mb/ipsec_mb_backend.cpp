// The ipsec-mb backend. Each RawCipher or SegmentAead owns one IMB_MGR (a
// manager is not thread-safe, and one per thread is what ipsec-mb expects) and
// its expanded keys, wiped when it is destroyed.
//
// What ipsec-mb 1.3 (Debian 12) does, and what this file does about it:
// - CTR runs through the job API with the 16-byte counter block as given, but
//   carries only in its low 32 bits, where openssl carries through all 128. A
//   job therefore never crosses a 2^32-block boundary of the counter: work is
//   split there and the next job starts from the counter with the full carry.
// - A CTR piece may end inside a block and the next piece resume there (a
//   stream's reads): the rest of that keystream block is kept.
// - ECB jobs are capped at 65,534 bytes; CTR and CBC jobs take large pieces,
//   which amortise the per-call error bookkeeping.
// - No CFB: CFB128 decryption is an ECB keystream (cipher/ecb_keystream.hpp).
//   CBC encryption is multi-buffer only (no gain on one stream), OFB, CFB8 and
//   CFB1 are missing: those stay on OpenSSL (runs()).
// - GCM runs through the direct API with the 12-byte nonce; opening computes
//   the tag and compares it in constant time here (CRYPTO_memcmp).
#include "cipher/ipsec_mb/ipsec_mb_backend.hpp"

#include <intel-ipsec-mb.h>
#include <openssl/crypto.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cipher/ecb_keystream.hpp"
#include "paes/error.hpp"
#include "util/shared_library.hpp"

namespace paes {
namespace {

// The library's own functions (the ciphers are reached through a manager's
// pointers), from libIPSec_MB.so.1 opened at first use: a job auto gives to
// OpenSSL never maps its 12 MB. Throws Error where the library is missing.
struct IpsecMbLibrary : LibraryFunctions<IpsecMbLibrary> {
  static constexpr const char* kSoname = "libIPSec_MB.so.1";
  static constexpr const char* kNeededFor = "the ipsec-mb backend runs Intel's ipsec-mb";
  PAES_LIBRARY_MEMBER(alloc_mb_mgr);
  PAES_LIBRARY_MEMBER(free_mb_mgr);
  PAES_LIBRARY_MEMBER(init_mb_mgr_auto);
  PAES_LIBRARY_MEMBER(imb_get_errno);
  PAES_LIBRARY_MEMBER(imb_get_strerror);
};

const IpsecMbLibrary& ipsec_mb() { return IpsecMbLibrary::get(); }

// Loading the library and its first manager's set-up (the self-test) cost a
// 2 KiB sealed job 0.55 ms (docs/PERFORMANCE.md, "Start-up"): what ipsec-mb
// saves a core on 4.4 MiB of AES-GCM (18.5 GB/s against OpenSSL's 5.8,
// section 5), and on 9 MiB of CTR (20.5 against 9.5). Below this, auto
// leaves a job to OpenSSL and never loads ipsec-mb; above, either is within
// a fraction of a millisecond of the other.
constexpr std::uint64_t kAutoMinJobLen = std::uint64_t{4} << 20;
constexpr std::size_t kMaxJobLen = std::size_t{1} << 24;  // CTR and CBC pieces
constexpr std::size_t kMaxEcbJobLen = 65534 / kBlockLen * kBlockLen;
constexpr std::uint64_t kCounterWrapBlocks = std::uint64_t{1} << 32;

struct ManagerFree {
  void operator()(IMB_MGR* manager) const { ipsec_mb().free_mb_mgr(manager); }
};
using ManagerPtr = std::unique_ptr<IMB_MGR, ManagerFree>;

[[noreturn]] void throw_ipsec_mb_error(const char* what, int err) {
  throw Error(std::string("ipsec-mb: ") + what + ": " + ipsec_mb().imb_get_strerror(err));
}

// A manager on the best code path for this CPU; init_mb_mgr_auto runs the
// library's self-test, whose failure shows in imb_get_errno.
ManagerPtr new_manager(IMB_ARCH* arch_out = nullptr) {
  const IpsecMbLibrary& imb = ipsec_mb();
  ManagerPtr manager(imb.alloc_mb_mgr(0));
  if (!manager) throw Error("ipsec-mb: out of memory for a manager");
  IMB_ARCH arch = IMB_ARCH_NONE;
  imb.init_mb_mgr_auto(manager.get(), &arch);
  if (const int err = imb.imb_get_errno(manager.get()); err != 0) throw_ipsec_mb_error("set-up failed", err);
  if (arch_out != nullptr) *arch_out = arch;
  return manager;
}

// Managers kept for the next job. Setting one up (its self-test) takes ~30 us,
// as long as AES-CTR takes for 256 KiB: a job's workers that each made their
// own ran 64 KiB at 1.7 GB/s instead of 12, and two workers on 1 MiB barely
// beat one. A manager holds no key: expanded keys and GCM key data live in the
// objects that lease it, and are wiped there. The pool grows to the most
// workers ever run at once, and is freed at exit.
class ManagerPool {
 public:
  ManagerPtr take() {
    {
      std::lock_guard lock(mutex_);
      if (!idle_.empty()) {
        ManagerPtr manager = std::move(idle_.back());
        idle_.pop_back();
        return manager;
      }
    }
    return new_manager();
  }
  void give_back(ManagerPtr manager) noexcept {
    std::lock_guard lock(mutex_);
    try {
      idle_.push_back(std::move(manager));
    } catch (...) {  // no room to keep it: it is freed
    }
  }

 private:
  std::mutex mutex_;
  std::vector<ManagerPtr> idle_;
};

ManagerPool& manager_pool() {
  static ManagerPool pool;
  return pool;
}

// A manager from the pool for the lifetime of one worker's cipher object.
class ManagerLease {
 public:
  ManagerLease() : manager_(manager_pool().take()) {}
  ~ManagerLease() { manager_pool().give_back(std::move(manager_)); }
  ManagerLease(const ManagerLease&) = delete;
  ManagerLease& operator=(const ManagerLease&) = delete;
  IMB_MGR* get() const { return manager_.get(); }

 private:
  ManagerPtr manager_;
};

const char* arch_name(IMB_ARCH arch) {
  switch (arch) {
    case IMB_ARCH_NOAESNI: return "no-aesni";
    case IMB_ARCH_SSE: return "sse";
    case IMB_ARCH_AVX: return "avx";
    case IMB_ARCH_AVX2: return "avx2";
    case IMB_ARCH_AVX512: return "avx512";
    default: return "none";
  }
}

// What this machine gives ipsec-mb, found once per process.
struct Probe {
  bool available = false;
  bool chosen_by_auto = false;
  std::string detail;
  std::string why_not;
};

const Probe& probe() {
  static const Probe result = [] {
    Probe p;
    try {
      IMB_ARCH arch = IMB_ARCH_NONE;
      ManagerPtr manager = new_manager(&arch);
      const std::uint64_t features = manager->features;
      manager_pool().give_back(std::move(manager));  // the first worker's, set up already
      p.detail = std::string(IMB_VERSION_STR) + ", " + arch_name(arch);
      if (features & IMB_FEATURE_VAES) p.detail += " with VAES";
      if (features & IMB_FEATURE_VPCLMULQDQ) p.detail += ", VPCLMULQDQ";
      if (arch == IMB_ARCH_NOAESNI || arch == IMB_ARCH_NONE) {
        p.why_not = "this CPU has no AES-NI";
      } else {
        p.available = true;
        p.chosen_by_auto = ipsec_mb_chosen_by_auto(arch, features);
      }
    } catch (const Error& e) {
      p.why_not = e.what();
    }
    return p;
  }();
  return result;
}

// One thread's manager and AES key schedule, and a synchronous job on them.
class ImbAesKey {
 public:
  explicit ImbAesKey(const SecretBytes& key) : key_len_(key.size()) {
    switch (key_len_) {
      case 16: IMB_AES_KEYEXP_128(manager_.get(), key.data(), encrypt_keys_, decrypt_keys_); break;
      case 24: IMB_AES_KEYEXP_192(manager_.get(), key.data(), encrypt_keys_, decrypt_keys_); break;
      case 32: IMB_AES_KEYEXP_256(manager_.get(), key.data(), encrypt_keys_, decrypt_keys_); break;
      default: check_key_length(key_len_);
    }
  }
  ~ImbAesKey() {
    OPENSSL_cleanse(encrypt_keys_, sizeof encrypt_keys_);
    OPENSSL_cleanse(decrypt_keys_, sizeof decrypt_keys_);
  }
  ImbAesKey(const ImbAesKey&) = delete;
  ImbAesKey& operator=(const ImbAesKey&) = delete;

  // Runs one cipher-only job of `len` > 0 bytes to completion. `iv` is the
  // 16-byte counter block (CTR) or chaining block (CBC); null for ECB.
  void run(IMB_CIPHER_MODE mode, IMB_CIPHER_DIRECTION direction, const std::uint8_t* iv,
           std::uint8_t* out, const std::uint8_t* in, std::size_t len) {
    IMB_MGR* manager = manager_.get();
    IMB_JOB* job = IMB_GET_NEXT_JOB(manager);
    job->cipher_mode = mode;
    job->cipher_direction = direction;
    job->chain_order = direction == IMB_DIR_ENCRYPT ? IMB_ORDER_CIPHER_HASH : IMB_ORDER_HASH_CIPHER;
    job->hash_alg = IMB_AUTH_NULL;
    job->enc_keys = encrypt_keys_;
    job->dec_keys = decrypt_keys_;
    job->key_len_in_bytes = key_len_;
    job->src = in;
    job->dst = out;
    job->cipher_start_src_offset_in_bytes = 0;
    job->msg_len_to_cipher_in_bytes = len;
    job->iv = iv;
    job->iv_len_in_bytes = iv != nullptr ? kBlockLen : 0;
    job = IMB_SUBMIT_JOB(manager);
    // The one job in flight completes on submission or, at the latest, on a flush.
    while (job == nullptr) {
      if (const int err = ipsec_mb().imb_get_errno(manager); err != 0) throw_ipsec_mb_error("job refused", err);
      job = IMB_FLUSH_JOB(manager);
    }
    if (job->status != IMB_STATUS_COMPLETED) throw_ipsec_mb_error("job failed", ipsec_mb().imb_get_errno(manager));
  }

 private:
  ManagerLease manager_;
  std::size_t key_len_;
  alignas(64) std::uint32_t encrypt_keys_[4 * 15];  // up to 15 round keys (AES-256)
  alignas(64) std::uint32_t decrypt_keys_[4 * 15];
};

std::uint32_t low_counter_word(const Block& counter) {
  return static_cast<std::uint32_t>(counter[12]) << 24 | static_cast<std::uint32_t>(counter[13]) << 16 |
         static_cast<std::uint32_t>(counter[14]) << 8 | counter[15];
}

class ImbCtr final : public RawCipher {
 public:
  explicit ImbCtr(const CipherSpec& spec) : aes_(spec.key) {}
  ~ImbCtr() override { OPENSSL_cleanse(keystream_, sizeof keystream_); }

  void begin(const Block& start_state) override {
    counter_ = start_state;
    keystream_used_ = kBlockLen;
  }

  void update(std::uint8_t* out, const std::uint8_t* in, std::size_t len) override {
    std::size_t done = 0;
    if (keystream_used_ < kBlockLen) {  // the block the previous piece ended in
      done = std::min(len, kBlockLen - keystream_used_);
      xor_into(out, in, keystream_ + keystream_used_, done);
      keystream_used_ += done;
    }
    while (len - done >= kBlockLen) {
      const std::uint64_t to_wrap = kCounterWrapBlocks - low_counter_word(counter_);
      const std::uint64_t blocks =
          std::min<std::uint64_t>({(len - done) / kBlockLen, to_wrap, kMaxJobLen / kBlockLen});
      const std::size_t n = static_cast<std::size_t>(blocks) * kBlockLen;
      aes_.run(IMB_CIPHER_CNTR, IMB_DIR_ENCRYPT, counter_.data(), out + done, in + done, n);
      counter_ = add_to_counter(counter_, blocks);
      done += n;
    }
    if (done < len) {  // a partial block: keep the rest of its keystream
      std::memset(keystream_, 0, kBlockLen);
      aes_.run(IMB_CIPHER_CNTR, IMB_DIR_ENCRYPT, counter_.data(), keystream_, keystream_, kBlockLen);
      counter_ = add_to_counter(counter_, 1);
      keystream_used_ = len - done;
      xor_into(out + done, in + done, keystream_, keystream_used_);
    }
  }

  const char* implementation() const override { return "ipsec-mb"; }

 private:
  ImbAesKey aes_;
  Block counter_{};  // the counter of the next whole block
  std::uint8_t keystream_[kBlockLen]{};
  std::size_t keystream_used_ = kBlockLen;
};

class ImbEcb final : public RawCipher {
 public:
  explicit ImbEcb(const CipherSpec& spec)
      : aes_(spec.key), direction_(spec.direction == Direction::encrypt ? IMB_DIR_ENCRYPT : IMB_DIR_DECRYPT) {}

  void begin(const Block&) override {}

  void update(std::uint8_t* out, const std::uint8_t* in, std::size_t len) override {
    for (std::size_t done = 0; done < len;) {
      const std::size_t n = std::min(kMaxEcbJobLen, len - done);
      aes_.run(IMB_CIPHER_ECB, direction_, nullptr, out + done, in + done, n);
      done += n;
    }
  }

  const char* implementation() const override { return "ipsec-mb"; }

 private:
  ImbAesKey aes_;
  IMB_CIPHER_DIRECTION direction_;
};

class ImbCbcDecrypt final : public RawCipher {
 public:
  explicit ImbCbcDecrypt(const CipherSpec& spec) : aes_(spec.key) {}

  void begin(const Block& start_state) override { previous_ = start_state; }

  void update(std::uint8_t* out, const std::uint8_t* in, std::size_t len) override {
    for (std::size_t done = 0; done < len;) {
      const std::size_t n = std::min(kMaxJobLen, len - done);
      Block last;  // read before an in-place job overwrites it
      std::memcpy(last.data(), in + done + n - kBlockLen, kBlockLen);
      aes_.run(IMB_CIPHER_CBC, IMB_DIR_DECRYPT, previous_.data(), out + done, in + done, n);
      previous_ = last;
      done += n;
    }
  }

  const char* implementation() const override { return "ipsec-mb"; }

 private:
  ImbAesKey aes_;
  Block previous_{};  // the ciphertext block before the next one
};

class ImbCfb128Decrypt final : public EcbKeystreamCfb128Decrypt {
 public:
  explicit ImbCfb128Decrypt(const CipherSpec& spec) : aes_(spec.key) {}
  const char* implementation() const override { return "ipsec-mb-ecb-keystream"; }

 private:
  void ecb_encrypt(std::uint8_t* out, const std::uint8_t* in, std::size_t len) override {
    aes_.run(IMB_CIPHER_ECB, IMB_DIR_ENCRYPT, nullptr, out, in, len);
  }
  ImbAesKey aes_;
};

class ImbGcm final : public SegmentAead {
 public:
  explicit ImbGcm(const SecretBytes& key) : key_len_(key.size()) {
    if (key_len_ == 16) {
      IMB_AES128_GCM_PRE(manager_.get(), key.data(), &key_data_);
    } else if (key_len_ == 32) {
      IMB_AES256_GCM_PRE(manager_.get(), key.data(), &key_data_);
    } else {
      throw Error("AES-GCM key must be 16 or 32 bytes, got " + std::to_string(key_len_));
    }
    check("GCM key set-up failed");
  }
  ~ImbGcm() override { OPENSSL_cleanse(&key_data_, sizeof key_data_); }

  void seal(const GcmNonce& nonce, std::uint8_t* out, const std::uint8_t* in, std::size_t len) override {
    gcm_context_data context;
    if (key_len_ == 16) {
      IMB_AES128_GCM_ENC(manager_.get(), &key_data_, &context, out, in, len, nonce.data(), nullptr, 0,
                         out + len, kTagLen);
    } else {
      IMB_AES256_GCM_ENC(manager_.get(), &key_data_, &context, out, in, len, nonce.data(), nullptr, 0,
                         out + len, kTagLen);
    }
    OPENSSL_cleanse(&context, sizeof context);
    check("GCM sealing failed");
  }

  bool open(const GcmNonce& nonce, std::uint8_t* out, const std::uint8_t* in, std::size_t len) override {
    const std::size_t body = len - kTagLen;
    std::uint8_t expected[kTagLen];
    std::memcpy(expected, in + body, kTagLen);  // before an in-place decrypt could touch it
    std::uint8_t tag[kTagLen];
    gcm_context_data context;
    if (key_len_ == 16) {
      IMB_AES128_GCM_DEC(manager_.get(), &key_data_, &context, out, in, body, nonce.data(), nullptr, 0, tag,
                         kTagLen);
    } else {
      IMB_AES256_GCM_DEC(manager_.get(), &key_data_, &context, out, in, body, nonce.data(), nullptr, 0, tag,
                         kTagLen);
    }
    OPENSSL_cleanse(&context, sizeof context);
    check("GCM opening failed");
    return CRYPTO_memcmp(tag, expected, kTagLen) == 0;
  }

  const char* implementation() const override { return "ipsec-mb"; }

 private:
  void check(const char* what) const {
    if (const int err = ipsec_mb().imb_get_errno(manager_.get()); err != 0) throw_ipsec_mb_error(what, err);
  }

  ManagerLease manager_;
  std::size_t key_len_;
  alignas(64) gcm_key_data key_data_;
};

class IpsecMbBackend final : public CipherBackend {
 public:
  std::string_view name() const override { return "ipsec-mb"; }
  bool available() const override { return probe().available; }
  bool chosen_by_auto() const override { return probe().chosen_by_auto; }
  std::string auto_rule() const override {
    return "first, where this CPU runs its fast code, for jobs of " + std::to_string(kAutoMinJobLen >> 20) +
           " MiB or more";
  }
  std::uint64_t auto_min_job_len() const override { return kAutoMinJobLen; }
  std::string detail() const override { return probe().detail; }
  std::string why_unavailable() const override { return probe().why_not; }

  bool runs(Mode mode, Direction direction) const override {
    switch (mode) {
      case Mode::ecb:
      case Mode::ctr: return true;
      case Mode::cbc:
      case Mode::cfb128: return direction == Direction::decrypt;
      default: return false;
    }
  }

 private:
  std::unique_ptr<RawCipher> do_make_raw(const CipherSpec& spec) const override {
    switch (spec.mode) {
      case Mode::ctr: return std::make_unique<ImbCtr>(spec);
      case Mode::ecb: return std::make_unique<ImbEcb>(spec);
      case Mode::cbc:
        if (spec.direction == Direction::decrypt) return std::make_unique<ImbCbcDecrypt>(spec);
        break;
      case Mode::cfb128:
        if (spec.direction == Direction::decrypt) return std::make_unique<ImbCfb128Decrypt>(spec);
        break;
      default: break;
    }
    throw Error("ipsec-mb does not run AES-" + std::string(mode_name(spec.mode)) + " " +
                std::string(direction_name(spec.direction)));
  }
  std::unique_ptr<SegmentAead> do_make_segment(const SecretBytes& key, Direction) const override {
    return std::make_unique<ImbGcm>(key);
  }
};

}  // namespace

bool ipsec_mb_chosen_by_auto(int arch, std::uint64_t features) {
  const std::uint64_t wide_aes = IMB_FEATURE_VAES | IMB_FEATURE_VPCLMULQDQ;
  return arch == IMB_ARCH_AVX512 && (features & wide_aes) == wide_aes;
}

const CipherBackend& ipsec_mb_backend() {
  static const IpsecMbBackend backend;
  return backend;
}

}  // namespace paes
