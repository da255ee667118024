// The seam between paes and the library that runs AES on the CPU: what an
// engine's worker needs per thread (a raw mode's chunk, a GCM segment), and a
// backend that makes those objects: OpenSSL's EVP (cipher/openssl/), and Intel
// ipsec-mb (cipher/ipsec_mb/) where the build found it. Which backend runs is
// chosen in one place, cipher/backends.cpp, once per job, under the process's
// choice (select_cipher_backend, paes/backend.hpp). No library's types appear
// here.
//
// A backend's objects carry no padding and no format: PKCS#7 is applied above
// them (padded_update in cipher/padding.hpp), and the sealed format's nonces
// are built above them (SegmentCodec).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "paes/mode.hpp"
#include "paes/secret.hpp"

namespace paes {

// One thread's AES for a raw mode, keyed once for one CipherSpec's mode, key
// and direction.
class RawCipher {
 public:
  virtual ~RawCipher() = default;
  // Starts a chunk from the state its plan gives: the counter (CTR), the
  // previous ciphertext block or IV (CBC, CFB), the IV (OFB); ignored for ECB.
  virtual void begin(const Block& start_state) = 0;
  // Transforms the next `len` bytes of the chunk into `out` (may equal `in`);
  // exactly `len` bytes come out. ECB and CBC get whole blocks only.
  virtual void update(std::uint8_t* out, const std::uint8_t* in, std::size_t len) = 0;
  // Which implementation runs, for tests and diagnostics ("openssl-evp").
  virtual const char* implementation() const = 0;
};

inline constexpr std::size_t kGcmNonceLen = 12;
inline constexpr std::size_t kTagLen = 16;
using GcmNonce = std::array<std::uint8_t, kGcmNonceLen>;

// One thread's AES-GCM under one key (16 or 32 bytes) for one direction: a
// 12-byte nonce per call, no associated data, a 16-byte tag after the
// ciphertext.
class SegmentAead {
 public:
  virtual ~SegmentAead() = default;
  // Encrypts `len` bytes into `out` (len + 16 bytes, may be `in`), the tag last.
  virtual void seal(const GcmNonce& nonce, std::uint8_t* out, const std::uint8_t* in,
                    std::size_t len) = 0;
  // Decrypts `len` >= 16 bytes (ciphertext, then tag) into `out` (len - 16
  // bytes, may be `in`). Returns false when the tag doesn't verify; what
  // `out` then holds must not be used.
  virtual bool open(const GcmNonce& nonce, std::uint8_t* out, const std::uint8_t* in,
                    std::size_t len) = 0;
  virtual const char* implementation() const = 0;
};

// A library that runs AES: one row of the table in cipher/backends.cpp.
class CipherBackend {
 public:
  virtual ~CipherBackend() = default;
  virtual std::string_view name() const = 0;
  // Whether this build and this machine can run it (a CPU feature, a self
  // test); called for every job, so a costly answer is worked out once.
  virtual bool available() const = 0;
  // Whether it runs this raw mode in this direction (every backend seals).
  virtual bool runs(Mode mode, Direction direction) const = 0;
  // Whether `auto` runs it here: where it is available and the fastest
  // backend for this CPU (OpenSSL is auto's fallback for everything).
  virtual bool chosen_by_auto() const = 0;
  // Version and code path on this machine, for `paes info` ("1.3.0, avx512").
  virtual std::string detail() const = 0;
  // Why available() is false, for the error that refuses an explicit choice.
  virtual std::string why_unavailable() const { return {}; }
  // The chunk length its workers want, for a plan whose caller left it to
  // the job (kAutoChunkLen); 0: the mode's default. A GPU wants the bytes of
  // one batch, so that a chunk is one launch.
  virtual std::uint64_t preferred_chunk_len() const { return 0; }
  // Whether it runs AES on a device rather than the CPU's cores (a GPU).
  virtual bool runs_on_device() const { return false; }
  // Memory for the engines' chunk buffers, page-locked where a device copies
  // from it by DMA (a GPU's pinned memory); null: ordinary memory serves.
  // Given back with free_chunk_memory(data, bytes).
  virtual void* allocate_chunk_memory(std::size_t /*bytes*/) const { return nullptr; }
  virtual void free_chunk_memory(void* /*data*/, std::size_t /*bytes*/) const noexcept {}

  // The per-thread objects. Throw Error when the library refuses the key.
  std::unique_ptr<RawCipher> make_raw(const CipherSpec& spec) const {
    made_.fetch_add(1, std::memory_order_relaxed);
    return do_make_raw(spec);
  }
  std::unique_ptr<SegmentAead> make_segment(const SecretBytes& key, Direction direction) const {
    made_.fetch_add(1, std::memory_order_relaxed);
    return do_make_segment(key, direction);
  }
  // How many objects this backend has made in this process: what the tests
  // read to know which implementation a job's workers ran (BoringSSL's
  // "which implementation ran" test, impl_dispatch_test).
  std::uint64_t objects_made() const { return made_.load(std::memory_order_relaxed); }

 private:
  virtual std::unique_ptr<RawCipher> do_make_raw(const CipherSpec& spec) const = 0;
  virtual std::unique_ptr<SegmentAead> do_make_segment(const SecretBytes& key,
                                                       Direction direction) const = 0;
  mutable std::atomic<std::uint64_t> made_{0};
};

// Every backend this build has, in order of preference (cipher/backends.cpp).
std::span<const CipherBackend* const> cipher_backends();

// The backend a job uses under the process's choice (select_cipher_backend):
// the chosen backend where it runs the work, else OpenSSL; under `auto`, the
// first row that is chosen_by_auto() and runs the work. Jobs call these once,
// when they are made; their workers use what they chose. Throws Error if none
// does (cannot happen while OpenSSL runs everything).
const CipherBackend& choose_raw_backend(Mode mode, Direction direction);
const CipherBackend& choose_segment_backend();
// The CPU backend auto would take for this work, whatever the process chose:
// what a GPU backend hands what it doesn't run, and checks its output with.
const CipherBackend& cpu_raw_backend(Mode mode, Direction direction);
// The row of this name, built in; null where there is none.
const CipherBackend* find_cipher_backend(std::string_view name);

}  // namespace paes
