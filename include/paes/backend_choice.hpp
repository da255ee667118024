// Which backend runs a job's AES, as a value a job carries (the rest of the
// backends' API, what they are and how auto measures, is paes/backend.hpp).
// Apart from it so that what only holds or passes a choice (a job, its
// ticket, an engine reporting what ran) sees no more of the backends.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace paes {

// "auto": ipsec-mb where it is built in and this CPU runs its VAES code,
// otherwise OpenSSL; with BackendChoice::gpu_where_faster, a GPU for the raw
// modes it runs, where auto measured it faster for the job (--engine auto).
// The default.
inline constexpr std::string_view kAutoBackend = "auto";

// Which backend runs a job's AES, as its caller asks for it.
struct BackendChoice {
  BackendChoice() = default;
  // NOLINTNEXTLINE(google-explicit-constructor): {"openssl"} reads as what it is
  BackendChoice(std::string backend_name, std::optional<unsigned> gpu_device = std::nullopt,
                bool gpu_if_faster = false)
      : name(std::move(backend_name)), device(gpu_device), gpu_where_faster(gpu_if_faster) {}

  // kAutoBackend or a backend's name (cipher_backend_names()). A named
  // backend runs every mode and direction it supports; the rest (CBC
  // encryption under ipsec-mb, the sealed format under a GPU) run on the
  // CPU's backend that auto takes.
  std::string name{kAutoBackend};
  // A GPU backend's device, by its index in `paes info` (unset: the API's
  // default); under auto with gpu_where_faster, the only GPU auto may take.
  std::optional<unsigned> device;
  // Auto's policy for raw jobs of known length: a GPU where it measured one
  // faster than the CPU for such a job on this machine (kept_auto_verdicts),
  // its start-up included. Off: auto stays on the CPU and starts no driver.
  bool gpu_where_faster = false;
  // The job's length in bytes where its front door knows it (a file): auto
  // passes over a backend whose start-up costs more than it saves on so few
  // bytes (ipsec-mb's library and self-test: CipherBackend::auto_min_job_len).
  // Unset (a stream, a choice made before the input is opened): taken as long.
  std::optional<std::uint64_t> job_len;

  bool is_auto() const { return name == kAutoBackend; }
  // This choice for a job of `len` bytes (unset: of unknown length).
  BackendChoice for_job_of(std::optional<std::uint64_t> len) const {
    BackendChoice choice = *this;
    choice.job_len = len;
    return choice;
  }
  // Auto with its GPU policy on: the front door may send a raw job to a GPU.
  bool auto_may_take_a_gpu() const { return is_auto() && gpu_where_faster; }
};

}  // namespace paes
