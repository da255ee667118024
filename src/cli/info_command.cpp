#include <omp.h>
#include <openssl/crypto.h>

#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "paes/engine.hpp"
#include "util/cpu_features.hpp"

namespace paes::cli {

CLI::App* add_info_command(CLI::App& app, InfoArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "info", "Show the OpenSSL version, the CPU's AES features and the engines built in");
  cmd->footer("Example:\n  paes info --json");
  cmd->add_flag("--json", args.json, "Print one JSON object");
  return cmd;
}

int run_info(const InfoArgs& args) {
  const CpuFeatures cpu = detect_cpu_features();
  const nlohmann::json info = {
      {"paes_version", "0.1.0"},
      {"openssl_version", OpenSSL_version(OPENSSL_VERSION)},
      {"cpu_features",
       {{"aes_ni", cpu.aes_ni},
        {"vaes", cpu.vaes},
        {"pclmulqdq", cpu.pclmulqdq},
        {"vpclmulqdq", cpu.vpclmulqdq},
        {"avx2", cpu.avx2},
        {"avx512f", cpu.avx512f}}},
      {"online_cpus", online_cpus()},
      {"engines", compiled_engines()},
      {"openmp", _OPENMP},
  };
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
            << "Online CPUs: " << online_cpus() << " (default --threads)\n"
            << "Engines:     " << compiled_engines() << '\n'
            << "OpenMP:      " << _OPENMP << '\n';
  return 0;
}

}  // namespace paes::cli
