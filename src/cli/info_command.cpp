#include <omp.h>
#include <openssl/crypto.h>

#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "paes/backend.hpp"
#include "paes/engine.hpp"
#include "util/cpu_features.hpp"

namespace paes::cli {

CLI::App* add_info_command(CLI::App& app, InfoArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "info", "Show the OpenSSL version, the CPU's AES features, the cipher backends and the engines built in");
  cmd->footer("Example:\n  paes info --json");
  cmd->add_flag("--json", args.json, "Print one JSON object");
  return cmd;
}

int run_info(const InfoArgs& args) {
  const CpuFeatures cpu = detect_cpu_features();
  nlohmann::json info = {
      {"paes_version", "0.1.0"},
      {"openssl_version", OpenSSL_version(OPENSSL_VERSION)},
      {"cpu_features",
       {{"aes_ni", cpu.aes_ni},
        {"vaes", cpu.vaes},
        {"pclmulqdq", cpu.pclmulqdq},
        {"vpclmulqdq", cpu.vpclmulqdq},
        {"avx2", cpu.avx2},
        {"avx512f", cpu.avx512f}}},
      {"backends", nlohmann::json::array()},
      {"backend_auto_chooses", segment_backend_name()},
      {"online_cpus", online_cpus()},
      {"engines", compiled_engines()},
      {"openmp", _OPENMP},
      {"opencl_devices", nlohmann::json::array()},
      {"cuda_devices", nlohmann::json::array()},
  };
  for (const CipherBackendInfo& b : cipher_backends_info()) {
    info["backends"].push_back({{"name", b.name}, {"built_in", b.built_in}, {"available", b.available},
                                {"chosen_by_auto", b.chosen_by_auto}, {"detail", b.detail}, {"why_not", b.why_not}});
  }
  for (const GpuDevice& d : list_gpu_devices(EngineKind::opencl)) {
    info["opencl_devices"].push_back({{"index", d.index}, {"platform", d.platform}, {"name", d.name},
                                      {"type", d.type}, {"version", d.version},
                                      {"compute_units", d.compute_units}});
  }
  for (const GpuDevice& d : list_gpu_devices(EngineKind::cuda)) {
    info["cuda_devices"].push_back({{"index", d.index}, {"name", d.name},
                                    {"compute_capability", d.compute_capability},
                                    {"multiprocessors", d.compute_units}});
  }
  if (const std::string versions = gpu_api_versions(EngineKind::cuda); !versions.empty()) {
    info["cuda_versions"] = versions;
  }
  if (args.json) {
    std::cout << info.dump(2) << '\n';
    return 0;
  }
  auto yes = [](bool on) { return on ? "yes" : "no"; };
  std::cout << "paes 0.1.0\n"
            << "OpenSSL:     " << OpenSSL_version(OPENSSL_VERSION) << '\n'
            << "CPU AES:     AES-NI " << yes(cpu.aes_ni) << ", VAES " << yes(cpu.vaes)
            << ", PCLMULQDQ " << yes(cpu.pclmulqdq) << ", VPCLMULQDQ " << yes(cpu.vpclmulqdq)
            << ", AVX2 " << yes(cpu.avx2) << ", AVX-512F " << yes(cpu.avx512f) << '\n'
            << "Backends:    auto runs " << info["backend_auto_chooses"].get<std::string>()
            << " (--backend; modes ipsec-mb lacks run on OpenSSL)\n";
  for (const CipherBackendInfo& b : cipher_backends_info()) {
    std::cout << "  " << b.name << ": " << (b.available ? b.detail : "unavailable, " + b.why_not) << '\n';
  }
  std::cout << "Online CPUs: " << online_cpus() << " (default --threads)\n"
            << "Engines:     " << compiled_engines() << '\n'
            << "OpenMP:      " << _OPENMP << '\n';
  for (const char* kind : {"opencl_devices", "cuda_devices"}) {
    const bool opencl = std::string_view(kind) == "opencl_devices";
    std::cout << (opencl ? "OpenCL:      " : "CUDA:        ");
    if (!opencl && info.contains("cuda_versions")) {
      std::cout << info["cuda_versions"].get<std::string>() << (info[kind].empty() ? "; " : "");
    }
    if (info[kind].empty()) std::cout << "no devices";
    std::cout << '\n';
    for (const auto& d : info[kind]) {
      std::cout << "  " << d["index"].get<unsigned>() << ": " << d["name"].get<std::string>() << " ("
                << (opencl ? d["platform"].get<std::string>() + ", " + d["type"].get<std::string>()
                           : "compute " + d["compute_capability"].get<std::string>())
                << ")\n";
    }
  }
  return 0;
}

}  // namespace paes::cli
