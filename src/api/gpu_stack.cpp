#include "api/gpu_stack.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <string_view>
#include <vector>

#include "cipher/kdf.hpp"
#include "cipher/backend.hpp"
#include "util/hex.hpp"

namespace paes {
namespace {

namespace fs = std::filesystem;

// The names in `dir` that `keep` accepts, sorted; none if it can't be read.
template <class Keep>
std::vector<std::string> names_in(const fs::path& dir, const Keep& keep) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (keep(name)) names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A device node as the device it stands for (its times change with use).
void add_node(std::string& facts, const fs::path& path) {
  struct stat st {};
  facts += path.string();
  if (::stat(path.c_str(), &st) == 0) facts += ' ' + std::to_string(st.st_rdev);
  facts += '\n';
}

// A file as its size and when it last changed.
void add_stat(std::string& facts, const fs::path& path) {
  struct stat st {};
  facts += path.string();
  if (::stat(path.c_str(), &st) == 0) {
    facts += ' ' + std::to_string(st.st_size) + ' ' + std::to_string(st.st_mtim.tv_sec) + '.' +
             std::to_string(st.st_mtim.tv_nsec);
  }
  facts += '\n';
}

// A small text file's contents (an ICD names its library; the NVIDIA
// driver's version file); at most 4 KiB of them.
void add_contents(std::string& facts, const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, 4096> text{};
  in.read(text.data(), text.size());
  facts.append(text.data(), static_cast<std::size_t>(in.gcount()));
  facts += '\n';
}

fs::path icd_directory() {
  // ocl-icd reads the ICDs of OCL_ICD_VENDORS instead when it names a directory.
  if (const char* vendors = std::getenv("OCL_ICD_VENDORS"); vendors != nullptr && *vendors != '\0') {
    std::error_code ec;
    if (fs::is_directory(vendors, ec)) return vendors;
  }
  return "/etc/OpenCL/vendors";
}

}  // namespace

std::string gpu_stack_fingerprint() {
  // The code whose speed was measured: the library or program this function
  // lies in, so a rebuilt or upgraded paes measures again.
  std::string facts = "backends:";
  for (const CipherBackend* backend : cipher_backends()) facts.append(" ").append(backend->name());
  facts += '\n';
  if (Dl_info self{}; ::dladdr(reinterpret_cast<void*>(&gpu_stack_fingerprint), &self) != 0 && self.dli_fname) {
    add_stat(facts, self.dli_fname);
  }
  for (const char* var : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "OCL_ICD_VENDORS", "OCL_ICD_FILENAMES",
                          "POCL_DEVICES", "ROCR_VISIBLE_DEVICES", "LD_PRELOAD", "LD_LIBRARY_PATH"}) {
    const char* value = std::getenv(var);
    facts.append(var).append(value != nullptr ? "=" : " unset").append(value != nullptr ? value : "").append("\n");
  }
  const auto gpu_node = [](std::string_view name) { return name.starts_with("nvidia") || name == "kfd"; };
  for (const std::string& name : names_in("/dev", gpu_node)) add_node(facts, fs::path("/dev") / name);
  for (const std::string& name : names_in("/dev/dri", [](std::string_view) { return true; })) {
    add_node(facts, fs::path("/dev/dri") / name);
  }
  add_contents(facts, "/proc/driver/nvidia/version");
  for (const std::string& gpu : names_in("/proc/driver/nvidia/gpus", [](std::string_view) { return true; })) {
    facts += "nvidia gpu " + gpu + '\n';
  }
  const fs::path icds = icd_directory();
  for (const std::string& name : names_in(icds, [](std::string_view n) { return n.ends_with(".icd"); })) {
    add_stat(facts, icds / name);
    add_contents(facts, icds / name);
  }
  const auto digest = sha256(facts);
  return encode_hex(std::span(digest).first(8));
}

}  // namespace paes
