// Facts of the file system that fingerprint what is installed, read without
// starting anything: auto's GPU stack fingerprint (api/gpu_stack.hpp) is made
// of them, each GPU API adding its own (cipher/gpu/gpu_backend.hpp: GpuApi).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace paes {

// The names in `dir` that `keep` accepts, sorted; none if it can't be read.
std::vector<std::string> names_in(const std::filesystem::path& dir,
                                  const std::function<bool(std::string_view)>& keep);
// Appends to `facts`: a device node as the device it stands for (its times
// change with use); a file as its size and when it last changed; a small
// text file's contents (at most 4 KiB); an environment variable, set or not.
void add_node(std::string& facts, const std::filesystem::path& path);
void add_stat(std::string& facts, const std::filesystem::path& path);
void add_contents(std::string& facts, const std::filesystem::path& path);
void add_variable(std::string& facts, const char* name);

}  // namespace paes
