// Auto's GPU policy (BackendChoice::gpu_where_faster, --engine auto): the
// backend of a raw-mode job, a GPU where it was measured faster than the CPU
// for this kind of job on this machine, else the CPU's backend (auto's row,
// cipher/backends.cpp). The front door asks it once per job, and the job
// holds what it chose. Its parts sit together in api/: the verdicts
// (here), their cache (rate_cache.hpp), the GPU stack's fingerprint
// (gpu_stack.hpp) and the probe that measures (auto_backend.cpp); the
// public face is paes/backend.hpp's (kAutoGpuMinBytes, kept_auto_verdicts).
//
// A GPU is considered when the caller left the backend to auto, the mode
// and direction run on a device (ECB, CTR, CBC/CFB128 decryption), the input
// is a file or buffer of at least kAutoGpuMinBytes (below that, starting a
// device costs more than it could save) and the device is a real GPU (a CPU
// device such as PoCL's never is: a GPU's kernels emulated on the CPU
// are far slower than the CPU's own AES). The first such job on a machine
// looks for a GPU (the backends' table in order, so an API listed later is
// loaded only where the ones before have no GPU), starts it, and measures in
// memory on kAutoProbeBytes the threads engine on the GPU's backend, with
// its transfers, and on the CPU's, with this run's threads (the file I/O is
// the same for both). What it found is kept (api/rate_cache.hpp) under a
// fingerprint of the GPU stack (api/gpu_stack.hpp), so later jobs decide
// without starting any driver: they run on the GPU only where it is
// predicted faster for their size, its start-up included. `-v` says what auto
// chose and why. A GPU that fails to start, its AES self-test or the
// measurement leaves the job to the CPU, with a warning (paes/notice.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "api/rate_cache.hpp"
#include "cipher/backend.hpp"
#include "paes/mode.hpp"

namespace paes {

inline constexpr std::size_t kAutoProbeBytes = std::size_t{64} << 20;

// Whether kept rates send a job of `len` bytes to the GPU: only where it is
// predicted faster, the seconds it takes to start included unless it already
// runs (it was just started to be measured). A tie stays on the CPU.
bool gpu_predicted_faster(const MeasuredRates& rates, std::uint64_t len, bool started);

// The least input that kept rates send to the GPU (kAutoGpuMinBytes at
// least); none where the CPU is at least as fast at any length.
std::optional<std::uint64_t> gpu_from_bytes(const MeasuredRates& rates);

// The cache key of a kind of job on this machine as it is now.
std::string auto_rate_key(const CipherSpec& spec, unsigned threads, std::optional<unsigned> device);

struct AutoChoice {
  const CipherBackend* backend = nullptr;  // the GPU backend chosen, on its device; null: the CPU's (raw_backend)
  std::string why;                         // for -v and --json: "auto chose NAME: ..."
};

// Auto's backend for `spec` on an input of `input_len` bytes (none: a
// stream, whose length is unknown) with `threads` threads; `device` is the
// GPU the caller named, if any.
AutoChoice choose_auto_backend(const CipherSpec& spec, std::optional<std::uint64_t> input_len, unsigned threads,
                               std::optional<unsigned> device);

}  // namespace paes
