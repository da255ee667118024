#include "util/stack_facts.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>

namespace paes {

namespace fs = std::filesystem;

std::vector<std::string> names_in(const fs::path& dir, const std::function<bool(std::string_view)>& keep) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (keep(name)) names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  return names;
}

void add_node(std::string& facts, const fs::path& path) {
  struct stat st {};
  facts += path.string();
  if (::stat(path.c_str(), &st) == 0) facts += ' ' + std::to_string(st.st_rdev);
  facts += '\n';
}

void add_stat(std::string& facts, const fs::path& path) {
  struct stat st {};
  facts += path.string();
  if (::stat(path.c_str(), &st) == 0) {
    facts += ' ' + std::to_string(st.st_size) + ' ' + std::to_string(st.st_mtim.tv_sec) + '.' +
             std::to_string(st.st_mtim.tv_nsec);
  }
  facts += '\n';
}

void add_contents(std::string& facts, const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, 4096> text{};
  in.read(text.data(), text.size());
  facts.append(text.data(), static_cast<std::size_t>(in.gcount()));
  facts += '\n';
}

void add_variable(std::string& facts, const char* name) {
  const char* value = std::getenv(name);
  facts.append(name).append(value != nullptr ? "=" : " unset").append(value != nullptr ? value : "").append("\n");
}

}  // namespace paes
