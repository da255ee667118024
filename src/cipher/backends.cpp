// The one place a BackendChoice becomes the backend a job runs. The table
// lists every backend paes has code for, in order of preference: the CPU's,
// OpenSSL last of them (it runs everything, on every CPU), then the GPUs',
// which auto takes only where it measured them faster (api/auto_backend.hpp,
// at the front door). docs/ARCHITECTURE.md's recipes say what else a new row
// needs.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cipher/backend.hpp"
#include "cipher/gpu/gpu_backend.hpp"
#include "cipher/openssl/openssl_backend.hpp"
#include "paes/backend.hpp"
#include "paes/error.hpp"
#ifdef PAES_HAVE_IPSEC_MB
#include "cipher/ipsec_mb/ipsec_mb_backend.hpp"
#endif
#ifdef PAES_HAVE_OPENCL
#include "cipher/opencl/opencl_device.hpp"
#endif
#ifdef PAES_HAVE_CUDA
#include "cipher/cuda/cuda_device.hpp"
#endif

namespace paes {
namespace {

// One row: a backend's name, and the backend where this build has it (else
// why not). A GPU backend is made at first use and never destroyed: its
// driver's own teardown at exit must not run before ours.
struct BackendRow {
  std::string_view name;
  const CipherBackend* (*get)();
  std::string_view not_built;
  bool gpu = false;
  GpuApi (*gpu_api)() = nullptr;  // a GPU row built in: its API
};

constexpr BackendRow kRows[] = {
    {"ipsec-mb",
#ifdef PAES_HAVE_IPSEC_MB
     [] { return static_cast<const CipherBackend*>(&ipsec_mb_backend()); },
#else
     nullptr,
#endif
     "not built in (install libipsec-mb-dev, e.g. with scripts/setup.sh, and rebuild)"},
    {"openssl", [] { return &openssl_backend(); }, ""},
    {"cuda",
#ifdef PAES_HAVE_CUDA
     []() -> const CipherBackend* {
       static const GpuCipherBackend* const backend = new GpuCipherBackend(cuda_api());
       return backend;
     },
#else
     nullptr,
#endif
     "not built in (this paes was built without CUDA: install nvcc and rebuild)", true,
#ifdef PAES_HAVE_CUDA
     cuda_api,
#endif
    },
    {"opencl",
#ifdef PAES_HAVE_OPENCL
     []() -> const CipherBackend* {
       static const GpuCipherBackend* const backend = new GpuCipherBackend(opencl_api());
       return backend;
     },
#else
     nullptr,
#endif
     "not built in (this paes was built without OpenCL: install ocl-icd-opencl-dev and rebuild)", true,
#ifdef PAES_HAVE_OPENCL
     opencl_api,
#endif
    },
};

// Whether auto gives `backend` a job of `job_len` bytes (unset: a stream, long).
// The length first: available() may load the backend's library.
bool auto_gives(const CipherBackend& backend, std::optional<std::uint64_t> job_len) {
  return (!job_len || *job_len >= backend.auto_min_job_len()) && backend.available() && backend.chosen_by_auto();
}

const CipherBackend* find_backend(std::string_view name) {
  for (const CipherBackend* backend : cipher_backends()) {
    if (backend->name() == name) return backend;
  }
  return nullptr;
}

std::string known_names() {
  std::string names = "auto";
  for (const BackendRow& row : kRows) names += ", " + std::string(row.name);
  return names;
}

}  // namespace

std::span<const CipherBackend* const> cipher_backends() {
  static const std::vector<const CipherBackend*> backends = [] {
    std::vector<const CipherBackend*> built;
    for (const BackendRow& row : kRows) {
      if (row.get) built.push_back(row.get());
    }
    return built;
  }();
  return backends;
}

const CipherBackend& cpu_raw_backend(Mode mode, Direction direction) {
  for (const CipherBackend* backend : cipher_backends()) {
    if (!backend->runs_on_device() && backend->available() && backend->chosen_by_auto() &&
        backend->runs(mode, direction)) {
      return *backend;
    }
  }
  return openssl_backend();
}

const CipherBackend* find_cipher_backend(std::string_view name) { return find_backend(name); }

namespace {

// The backend `choice` names, on its device; null under auto. Throws the
// usage Errors of check_backend_choice.
const CipherBackend* named_backend(const BackendChoice& choice) {
  if (choice.is_auto()) {
    if (choice.device && !choice.auto_may_take_a_gpu()) {
      throw usage_error("a device is chosen with a GPU backend, or with auto where it may take a GPU (" +
                        known_names() + ")");
    }
    return nullptr;
  }
  const CipherBackend* backend = find_backend(choice.name);
  if (backend == nullptr) {
    for (const BackendRow& row : kRows) {
      if (row.name == choice.name) {
        throw usage_error("cipher backend " + choice.name + ": " + std::string(row.not_built));
      }
    }
    throw usage_error("unknown cipher backend '" + choice.name + "': choose " + known_names());
  }
  if (!backend->available()) {
    throw usage_error("cipher backend " + choice.name + " can't run here: " + backend->why_unavailable());
  }
  return &backend->on_device(choice.device);
}

}  // namespace

void check_backend_choice(const BackendChoice& choice) { named_backend(choice); }

const CipherBackend& raw_backend(const BackendChoice& choice, Mode mode, Direction direction) {
  if (const CipherBackend* named = named_backend(choice)) {
    return named->runs(mode, direction) ? *named : cpu_raw_backend(mode, direction);
  }
  for (const CipherBackend* backend : cipher_backends()) {
    if (backend->runs(mode, direction) && auto_gives(*backend, choice.job_len)) return *backend;
  }
  throw Error("no cipher backend runs AES-" + std::string(mode_name(mode)) + " " +
              std::string(direction_name(direction)));
}

const CipherBackend& segment_backend(const BackendChoice& choice) {
  if (const CipherBackend* named = named_backend(choice)) {
    return named->runs_on_device() ? cpu_raw_backend(Mode::ctr, Direction::encrypt) : *named;
  }
  for (const CipherBackend* backend : cipher_backends()) {
    if (auto_gives(*backend, choice.job_len)) return *backend;
  }
  throw Error("no cipher backend runs AES-GCM");
}

const CipherBackend& CipherBackend::on_device(std::optional<unsigned> index) const {
  if (index) throw usage_error("cipher backend " + std::string(name()) + " has no devices to choose from");
  return *this;
}

PinnedMemory CipherBackend::pin(const void*, std::size_t) const {
  throw usage_error("cipher backend " + std::string(name()) + " is no GPU backend of this build");
}

std::vector<GpuApi> gpu_apis() {
  std::vector<GpuApi> apis;
  for (const BackendRow& row : kRows) {
    if (row.gpu_api) apis.push_back(row.gpu_api());
  }
  return apis;
}

std::optional<GpuApi> find_gpu_api(std::string_view name) {
  for (const BackendRow& row : kRows) {
    if (row.gpu_api && row.name == name) return row.gpu_api();
  }
  return std::nullopt;
}

namespace {

// What a row runs, for `paes info`: "every mode", or its modes and
// directions ("ECB, CTR, CBC decrypt").
std::string what_it_runs(const CipherBackend& backend) {
  std::string list;
  bool all = true;
  for (Mode mode : kAllModes) {
    const bool encrypts = backend.runs(mode, Direction::encrypt);
    const bool decrypts = backend.runs(mode, Direction::decrypt);
    all = all && encrypts && decrypts;
    if (!encrypts && !decrypts) continue;
    if (!list.empty()) list += ", ";
    list += std::string(mode_name(mode)) + (encrypts && decrypts ? "" : encrypts ? " encrypt" : " decrypt");
  }
  if (all) list = "every mode";
  return list + (backend.runs_on_device() ? " (the rest, and the sealed format, on the CPU's backend)"
                                          : ", and the sealed format's AES-GCM");
}

}  // namespace

std::vector<CipherBackendInfo> cipher_backends_info() {
  std::vector<CipherBackendInfo> infos;
  bool auto_taken = false;  // auto takes the first CPU row it may (OpenSSL for what that row doesn't run)
  for (const BackendRow& row : kRows) {
    CipherBackendInfo info;
    info.name = std::string(row.name);
    if (const CipherBackend* backend = row.get ? find_backend(row.name) : nullptr) {
      info.built_in = true;
      info.available = backend->available();
      info.gpu = backend->runs_on_device();
      info.chosen_by_auto = !info.gpu && !auto_taken && info.available && backend->chosen_by_auto();
      auto_taken = auto_taken || info.chosen_by_auto;
      info.runs = what_it_runs(*backend);
      info.auto_rule = backend->auto_rule();
      info.detail = backend->detail();
      if (info.gpu) {
        info.versions = backend->versions();
        try {
          info.devices = backend->devices();
        } catch (const Error& e) {
          info.why_not = e.what();
        }
      }
      if (!info.available && info.why_not.empty()) info.why_not = backend->why_unavailable();
    } else {
      info.gpu = row.gpu;
      info.why_not = std::string(row.not_built);
    }
    infos.push_back(std::move(info));
  }
  return infos;
}

std::vector<CipherBackendName> cipher_backend_names() {
  std::vector<CipherBackendName> names;
  for (const BackendRow& row : kRows) names.push_back({std::string(row.name), row.gpu, row.get != nullptr});
  return names;
}

bool backend_runs(std::string_view name, Mode mode, Direction direction) {
  const CipherBackend* backend = find_backend(name);
  return backend != nullptr && backend->runs(mode, direction);
}

PinnedMemory pin_memory(const BackendChoice& choice, const void* data, std::size_t len) {
  const CipherBackend* backend = choice.is_auto() ? nullptr : find_backend(choice.name);
  if (!backend) throw usage_error("cipher backend " + choice.name + " is no GPU backend of this build");
  return named_backend(choice)->pin(data, len);
}

unsigned cipher_device_count(std::string_view name) {
  const CipherBackend* backend = find_backend(name);
  if (!backend) return 0;
  try {
    return static_cast<unsigned>(backend->devices().size());
  } catch (const Error&) {
    return 0;  // a driver whose listing fails has no device to give
  }
}

std::string raw_backend_name(const BackendChoice& choice, Mode mode, Direction direction) {
  return std::string(raw_backend(choice, mode, direction).name());
}

std::uint64_t backend_chunk_len(const BackendChoice& choice, Mode mode, Direction direction) {
  return raw_backend(choice, mode, direction).preferred_chunk_len();
}

std::string segment_backend_name(const BackendChoice& choice) { return std::string(segment_backend(choice).name()); }

}  // namespace paes
