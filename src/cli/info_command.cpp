#include <openssl/crypto.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/mpi_build_facts.hpp"
#include "cli/progress.hpp"
#include "paes/backend.hpp"
#include "paes/engine.hpp"
#include "util/base64_lines.hpp"
#include "util/cpu_features.hpp"

namespace paes::cli {

CLI::App* add_info_command(CLI::App& app, InfoArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "info", "Show the OpenSSL version, the CPU's AES features, the cipher backends and the engines built in");
  cmd->footer("Example:\n  paes info --json");
  cmd->add_flag("--json", args.json, "Print one JSON object");
  return cmd;
}

namespace {

// Why --engine auto could not keep its measurements at `path` (its rate
// cache), or "" when it could: no path (no HOME nor cache variables), or a
// nearest existing directory that is no directory or not writable. Looked
// at, not tried: info writes nothing.
std::string why_the_cache_cannot_be_kept(const std::string& path) {
  if (path.empty()) return "no place for it: HOME, XDG_CACHE_HOME and PAES_CACHE_DIR are unset";
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::error_code ignored;
  while (!dir.empty() && !std::filesystem::exists(dir, ignored) && dir != dir.parent_path()) dir = dir.parent_path();
  if (dir.empty()) return {};
  if (!std::filesystem::is_directory(dir, ignored)) return dir.string() + " is not a directory";
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return dir.string() + " is not writable";
  return {};
}

// One kept verdict of --engine auto, e.g. "ctr encrypt AES-128, 16 threads,
// --backend auto: NAME (NVIDIA H100) 30.10 GB/s with transfers + 0.41 s to start,
// the CPU 25.30 GB/s: the GPU from 60.6 GiB".
std::string describe(const AutoVerdict& v) {
  if (v.gpu_backend.empty()) return v.job + ": no GPU";
  char rates[160];
  std::snprintf(rates, sizeof rates, " %.2f GB/s with transfers + %.2f s to start, the CPU %.2f GB/s: ",
                v.gpu_bytes_per_s / 1e9, v.gpu_start_seconds, v.cpu_bytes_per_s / 1e9);
  return v.job + ": " + v.gpu_backend + " (" + v.device + ")" + rates +
         (v.gpu_from_bytes ? "the GPU from " + format_size(*v.gpu_from_bytes) : "the CPU at any size");
}

nlohmann::json device_json(const GpuDeviceInfo& d) {
  nlohmann::json device = {{"index", d.index}, {"name", d.name}, {"type", d.type}, {"compute_units", d.compute_units}};
  if (!d.platform.empty()) device["platform"] = d.platform;
  if (!d.version.empty()) device["version"] = d.version;
  if (!d.compute_capability.empty()) device["compute_capability"] = d.compute_capability;
  return device;
}

// Whether --engine mpi can start: paes hands it to paes-mpi beside itself,
// and a copied or half-installed paes (the paes package without paes-mpi)
// has none.
bool mpi_can_start() {
  char self[4096];
  const ssize_t len = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return true;
  const std::string path(self, static_cast<std::size_t>(len));
  const std::string dir = path.substr(0, path.rfind('/') + 1);
  return path.substr(dir.size()) == "paes-mpi" || ::access((dir + "paes-mpi").c_str(), X_OK) == 0;
}

// The engines this paes can run: the build's, less mpi where --engine mpi
// could not start (scripts decide by this list).
std::string runnable_engines() {
  std::string engines = engine_words();
  if (mpi_can_start()) return engines;
  std::istringstream words(engines);
  std::string runnable;
  for (std::string word; words >> word;) {
    if (word != "mpi") runnable += (runnable.empty() ? "" : " ") + word;
  }
  return runnable;
}

// The MPI paes-mpi was built with and its launcher, null without an mpi
// engine to run (none built, or no paes-mpi beside this paes).
nlohmann::json mpi_json() {
  const std::optional<MpiBuildFacts> mpi = mpi_build_facts();
  if (!mpi || !mpi_can_start()) return nullptr;
  return {{"library", mpi->library}, {"launcher", mpi->launcher}};
}

nlohmann::json cpu_features_json(const CpuFeatures& cpu) {
  return {{"aes_ni", cpu.aes_ni},         {"vaes", cpu.vaes},         {"pclmulqdq", cpu.pclmulqdq},
          {"vpclmulqdq", cpu.vpclmulqdq},   {"avx2", cpu.avx2},         {"avx512f", cpu.avx512f},
          {"avx512bw", cpu.avx512bw},       {"avx512vbmi", cpu.avx512vbmi}};
}

// What --json says before the backends: versions, the CPU, the engines.
nlohmann::json build_json(const CpuFeatures& cpu) {
  return {
      {"paes_version", PAES_VERSION},
      {"openssl_version", OpenSSL_version(OPENSSL_VERSION)},
      {"cpu_features", cpu_features_json(cpu)},
      {"armor_base64", base64_code_name(best_base64_code())},
      {"backends", nlohmann::json::array()},
      {"backend_auto_chooses", segment_backend_name(BackendChoice{})},
      {"online_cpus", online_cpus()},
      {"engines", runnable_engines()},
      {"mpi", mpi_json()},
      {"openmp", openmp_version()},
  };
}

// Backend `b`'s row of --json's "backends".
void add_backend_json(nlohmann::json& info, const CipherBackendInfo& b) {
  nlohmann::json row = {{"name", b.name},           {"built_in", b.built_in}, {"available", b.available},
                        {"chosen_by_auto", b.chosen_by_auto}, {"gpu", b.gpu}, {"runs", b.runs},
                        {"auto_rule", b.auto_rule}, {"detail", b.detail}, {"why_not", b.why_not}};
  if (b.gpu) {
    // Also as NAME_devices and NAME_versions at the top, as scripts
    // (bench/gpu/gpu_bench.py, the tests) have read them.
    nlohmann::json devices = nlohmann::json::array();
    for (const GpuDeviceInfo& d : b.devices) devices.push_back(device_json(d));
    row["devices"] = devices;
    row["versions"] = b.versions;
    info[b.name + "_devices"] = devices;
    if (!b.versions.empty()) info[b.name + "_versions"] = b.versions;
  }
  info["backends"].push_back(row);
}

nlohmann::json verdict_json(const AutoVerdict& v) {
  return {{"job", v.job},
          {"gpu_backend", v.gpu_backend},
          {"device", v.device},
          {"gpu_bytes_per_s", v.gpu_bytes_per_s},
          {"cpu_bytes_per_s", v.cpu_bytes_per_s},
          {"gpu_start_seconds", v.gpu_start_seconds},
          {"gpu_from_bytes", v.gpu_from_bytes ? nlohmann::json(*v.gpu_from_bytes) : nullptr}};
}

// Auto's rate cache in --json: where, why it can't be kept there, what it holds.
void add_auto_json(nlohmann::json& info, const std::string& cache_path, const std::vector<AutoVerdict>& verdicts) {
  info["auto_rate_cache"] = cache_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(cache_path);
  if (const std::string why = why_the_cache_cannot_be_kept(cache_path); !why.empty()) {
    info["auto_rate_cache_problem"] = why;
  }
  info["auto_kept"] = nlohmann::json::array();
  for (const AutoVerdict& v : verdicts) info["auto_kept"].push_back(verdict_json(v));
}

// The text's head: versions, the CPU's AES features, what auto runs.
void print_versions_and_cpu(const CpuFeatures& cpu, const std::string& auto_chooses) {
  auto yes = [](bool on) { return on ? "yes" : "no"; };
  std::cout << "paes " PAES_VERSION "\n"
            << "OpenSSL:     " << OpenSSL_version(OPENSSL_VERSION) << '\n'
            << "CPU AES:     AES-NI " << yes(cpu.aes_ni) << ", VAES " << yes(cpu.vaes)
            << ", PCLMULQDQ " << yes(cpu.pclmulqdq) << ", VPCLMULQDQ " << yes(cpu.vpclmulqdq)
            << ", AVX2 " << yes(cpu.avx2) << ", AVX-512F " << yes(cpu.avx512f) << '\n'
            << "Armor:       base64 on " << base64_code_name(best_base64_code()) << " code (-a)\n"
            << "Backends:    auto runs " << auto_chooses
            << " (--backend; what a backend lacks runs on the CPU's)\n";
}

// Each backend's lines: what it is or why it is not, what it runs, its devices.
void print_backends(const std::vector<CipherBackendInfo>& backends) {
  for (const CipherBackendInfo& b : backends) {
    std::cout << "  " << b.name << ": "
              << (b.available ? b.detail : "unavailable, " + b.why_not + (b.versions.empty() ? "" : " (" + b.versions + ")"));
    if (b.built_in) std::cout << "\n    runs " << b.runs << "; auto takes it " << b.auto_rule;
    std::cout << '\n';
    for (const GpuDeviceInfo& d : b.devices) {
      std::cout << "    device " << d.index << ": " << d.name << " ("
                << (d.platform.empty() ? "" : d.platform + ", ") << d.type
                << (d.compute_capability.empty() ? "" : ", compute " + d.compute_capability) << ")\n";
    }
  }
}

// The CPUs, the engines, MPI and OpenMP.
void print_engines(const nlohmann::json& mpi) {
  std::cout << "Online CPUs: " << online_cpus() << " (default --threads)\n"
            << "Engines:     " << runnable_engines() << '\n';
  if (!mpi.is_null()) {
    std::cout << "MPI:         paes-mpi built with " << mpi["library"].get<std::string>() << "; launch it with "
              << mpi["launcher"].get<std::string>() << " -n N paes --engine mpi ...\n";
  } else if (mpi_build_facts()) {
    std::cout << "MPI:         not installed: --engine mpi runs paes-mpi, which is not beside this paes (install "
                 "the paes-mpi package)\n";
  }
  std::cout << "OpenMP:      " << openmp_version() << '\n';
}

// What --engine auto keeps, and whether it can keep it.
void print_auto(const std::string& cache_path, const std::vector<AutoVerdict>& verdicts) {
  std::cout << "Auto:        ";
  if (const std::string why = why_the_cache_cannot_be_kept(cache_path); !why.empty()) {
    std::cout << "can't keep what it measures (" << why << "), so every large job measures again; "
              << "PAES_CACHE_DIR names a directory for it\n             ";
  }
  if (verdicts.empty()) {
    std::cout << "nothing measured yet on this machine as it is: --engine auto measures on its first job of "
              << format_size(kAutoGpuMinBytes) << " or more in a mode a GPU runs\n";
  } else {
    std::cout << "kept in " << auto_rate_cache_path() << " (delete it to measure again)\n";
    for (const AutoVerdict& v : verdicts) std::cout << "  " << describe(v) << '\n';
  }
}

}  // namespace

int run_info(const InfoArgs& args) {
  const CpuFeatures cpu = detect_cpu_features();
  // Before any driver starts (listing devices starts them), as a job sees
  // the GPU stack when it looks its kind up.
  const std::vector<AutoVerdict> verdicts = kept_auto_verdicts();
  nlohmann::json info = build_json(cpu);
  const std::vector<CipherBackendInfo> backends = cipher_backends_info();
  for (const CipherBackendInfo& b : backends) add_backend_json(info, b);
  const std::string cache_path = auto_rate_cache_path();
  add_auto_json(info, cache_path, verdicts);
  if (args.json) {
    // Paths (the rate cache's, from HOME) need not be UTF-8, which JSON
    // text must be: bytes that aren't become U+FFFD, not a failed command.
    std::cout << info.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return 0;
  }
  print_versions_and_cpu(cpu, info["backend_auto_chooses"].get<std::string>());
  print_backends(backends);
  print_engines(info["mpi"]);
  print_auto(cache_path, verdicts);
  return 0;
}

}  // namespace paes::cli
