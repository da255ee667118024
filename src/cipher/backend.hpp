// The seam between paes and the libraries that run AES: what an engine's
// worker needs per thread (a raw mode's chunk, a GCM segment), and a backend
// that makes those objects: OpenSSL's EVP (cipher/openssl/), Intel ipsec-mb
// (cipher/ipsec_mb/) where the build found it, and the GPUs' (cipher/gpu/).
// A caller's BackendChoice (paes/backend.hpp) is resolved to one of them in
// one place, cipher/backends.cpp, once per job; the job holds what it
// resolved to and its workers use it. No library's types appear here.
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
#include <vector>

#include "paes/backend.hpp"
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

// A library that runs AES: one row of the table in cipher/backends.cpp, or
// one device of a GPU row (on_device). Immutable once made, as far as a job
// can tell: what it caches (a device opened at first use, lanes, pinned
// memory) it guards itself, so any number of jobs and workers share it.
class CipherBackend {
 public:
  // `preferred_chunk_len`: the chunk length its workers want, for a plan
  // whose caller left it to the job (ChunkPlan::decide_chunk_len); 0: the
  // mode's default, fitted to the workers. A GPU wants the bytes of one
  // batch, so that a chunk is one launch.
  explicit CipherBackend(std::uint64_t preferred_chunk_len = 0) : preferred_chunk_len_(preferred_chunk_len) {}
  virtual ~CipherBackend() = default;
  CipherBackend(const CipherBackend&) = delete;
  CipherBackend& operator=(const CipherBackend&) = delete;

  virtual std::string_view name() const = 0;
  // Whether this build and this machine can run it (a CPU feature, a self
  // test); called for every job, so a costly answer is worked out once.
  virtual bool available() const = 0;
  // Whether it runs this raw mode in this direction (every CPU backend seals).
  virtual bool runs(Mode mode, Direction direction) const = 0;
  // Whether `auto` runs it here: where it is available and the fastest
  // backend for this CPU (OpenSSL is auto's fallback for everything).
  virtual bool chosen_by_auto() const = 0;
  // How auto ranks it, for `paes info`: by default, never (it runs only
  // where a job names it).
  virtual std::string auto_rule() const { return "never: only where a job names it"; }
  // The shortest job auto gives it: below, what it costs to start (loading
  // it, setting it up) is more than it saves. 0: any job.
  virtual std::uint64_t auto_min_job_len() const { return 0; }
  // Version and code path on this machine, for `paes info` ("1.3.0, avx512").
  virtual std::string detail() const = 0;
  // Why available() is false, for the error that refuses an explicit choice.
  virtual std::string why_unavailable() const { return {}; }
  std::uint64_t preferred_chunk_len() const { return preferred_chunk_len_; }
  // Whether it runs AES on a device rather than the CPU's cores (a GPU).
  virtual bool runs_on_device() const { return false; }
  // Memory for the engines' chunk buffers, page-locked where a device copies
  // from it by DMA (a GPU's pinned memory); null: ordinary memory serves.
  // Given back with free_chunk_memory(data, bytes).
  virtual void* allocate_chunk_memory(std::size_t /*bytes*/) const { return nullptr; }
  virtual void free_chunk_memory(void* /*data*/, std::size_t /*bytes*/) const noexcept {}

  // A GPU backend's devices. The backend on device `index` (BackendChoice::
  // device; unset: the API's default, which is this row), made at first use
  // and kept as long as the row; a usage Error for a backend with no devices
  // to choose from (every CPU backend, given an index).
  virtual const CipherBackend& on_device(std::optional<unsigned> index) const;
  // The device this backend runs on; unset for the API's default and for a
  // CPU backend.
  virtual std::optional<unsigned> device_index() const { return std::nullopt; }
  // Every device, as `paes info` lists them; empty for a CPU backend. Starts
  // a GPU API's driver; throws Error where listing fails.
  virtual std::vector<GpuDeviceInfo> devices() const { return {}; }
  // A GPU API's runtime and driver versions, for `paes info`; may be empty.
  virtual std::string versions() const { return {}; }
  // Opens the device now, if it isn't, and self-tests it: auto starts a GPU
  // before it times anything. Throws what opening throws. Nothing to do on
  // the CPU.
  virtual void start() const {}
  // Page-locks caller memory while the handle lives (pin_memory,
  // paes/backend.hpp); a usage Error for a backend that is no GPU.
  virtual PinnedMemory pin(const void* data, std::size_t len) const;

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
  const std::uint64_t preferred_chunk_len_;
  mutable std::atomic<std::uint64_t> made_{0};
};

// Every backend this build has, in order of preference (cipher/backends.cpp).
std::span<const CipherBackend* const> cipher_backends();

// The backend a job made under `choice` runs, resolved once when the job is
// made (its workers use what it gives): the named backend (on its device)
// where it runs the work, else the CPU's; under auto, the first row that is
// chosen_by_auto() and runs the work, for a job of choice.job_len bytes
// (auto_min_job_len), never a GPU (auto's GPU verdict is the front door's,
// api/auto_backend.hpp). Throws like check_backend_choice.
const CipherBackend& raw_backend(const BackendChoice& choice, Mode mode, Direction direction);
const CipherBackend& segment_backend(const BackendChoice& choice);
// The CPU backend auto would take for this work, whatever the choice: what a
// GPU backend hands what it doesn't run, and checks its output with.
const CipherBackend& cpu_raw_backend(Mode mode, Direction direction);
// The row of this name, built in; null where there is none.
const CipherBackend* find_cipher_backend(std::string_view name);

}  // namespace paes
