// The one place paes chooses which library runs AES on the CPU. The table
// lists every backend this build has, in order of preference, OpenSSL last:
// it runs everything, on every CPU. A new backend is its folder beside
// cipher/openssl/, one row here and its tests (tests/unit/backend_test.cpp
// runs every row).
#include <atomic>
#include <string>

#include "cipher/backend.hpp"
#include "cipher/openssl/openssl_backend.hpp"
#include "paes/backend.hpp"
#include "paes/error.hpp"
#ifdef PAES_HAVE_IPSEC_MB
#include "cipher/ipsec_mb/ipsec_mb_backend.hpp"
#endif

namespace paes {
namespace {

// Every backend paes has code for, built into this library or not.
constexpr std::string_view kKnownBackends[] = {"ipsec-mb", "openssl"};

// The process's choice; null is auto.
std::atomic<const CipherBackend*> g_selected{nullptr};

const CipherBackend* find_backend(std::string_view name) {
  for (const CipherBackend* backend : cipher_backends()) {
    if (backend->name() == name) return backend;
  }
  return nullptr;
}

}  // namespace

std::span<const CipherBackend* const> cipher_backends() {
  static const CipherBackend* const kBackends[] = {
#ifdef PAES_HAVE_IPSEC_MB
      &ipsec_mb_backend(),
#endif
      &openssl_backend(),
  };
  return kBackends;
}

const CipherBackend& choose_raw_backend(Mode mode, Direction direction) {
  if (const CipherBackend* selected = g_selected.load(std::memory_order_acquire)) {
    return selected->runs(mode, direction) ? *selected : openssl_backend();
  }
  for (const CipherBackend* backend : cipher_backends()) {
    if (backend->available() && backend->chosen_by_auto() && backend->runs(mode, direction)) return *backend;
  }
  throw Error("no cipher backend runs AES-" + std::string(mode_name(mode)) + " " +
              std::string(direction_name(direction)));
}

const CipherBackend& choose_segment_backend() {
  if (const CipherBackend* selected = g_selected.load(std::memory_order_acquire)) return *selected;
  for (const CipherBackend* backend : cipher_backends()) {
    if (backend->available() && backend->chosen_by_auto()) return *backend;
  }
  throw Error("no cipher backend runs AES-GCM");
}

std::vector<CipherBackendInfo> cipher_backends_info() {
  std::vector<CipherBackendInfo> infos;
  bool auto_taken = false;  // auto takes the first row it may (OpenSSL for what that row doesn't run)
  for (std::string_view name : kKnownBackends) {
    CipherBackendInfo info;
    info.name = std::string(name);
    if (const CipherBackend* backend = find_backend(name)) {
      info.built_in = true;
      info.available = backend->available();
      info.chosen_by_auto = !auto_taken && info.available && backend->chosen_by_auto();
      auto_taken = auto_taken || info.chosen_by_auto;
      info.detail = backend->detail();
      info.why_not = info.available ? "" : backend->why_unavailable();
    } else {
      info.why_not = "not built in (install libipsec-mb-dev, e.g. with scripts/setup.sh, and rebuild)";
    }
    infos.push_back(std::move(info));
  }
  return infos;
}

void select_cipher_backend(std::string_view name) {
  if (name == kAutoBackend) {
    g_selected.store(nullptr, std::memory_order_release);
    return;
  }
  const CipherBackend* backend = find_backend(name);
  if (backend == nullptr) {
    for (const CipherBackendInfo& info : cipher_backends_info()) {
      if (info.name == name) throw usage_error("--backend " + info.name + ": " + info.why_not);
    }
    throw usage_error("unknown cipher backend '" + std::string(name) +
                      "': choose auto, openssl or ipsec-mb");
  }
  if (!backend->available()) {
    throw usage_error("--backend " + std::string(name) + " can't run here: " + backend->why_unavailable());
  }
  g_selected.store(backend, std::memory_order_release);
}

std::string selected_cipher_backend() {
  const CipherBackend* selected = g_selected.load(std::memory_order_acquire);
  return std::string(selected ? selected->name() : kAutoBackend);
}

std::string raw_backend_name(Mode mode, Direction direction) {
  return std::string(choose_raw_backend(mode, direction).name());
}

std::string segment_backend_name() { return std::string(choose_segment_backend().name()); }

}  // namespace paes
