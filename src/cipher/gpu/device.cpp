#include "cipher/gpu/device.hpp"

#include <string>

namespace paes::gpu {

Error no_such_device(const char* api, unsigned index, std::size_t count) {
  const std::string which = count == 1 ? "one " + std::string(api) + " device, numbered 0"
                                       : std::to_string(count) + " " + api + " devices, numbered 0 to " +
                                             std::to_string(count - 1);
  return usage_error("no " + std::string(api) + " device " + std::to_string(index) + ": this machine has " + which +
                     " (see paes info)");
}

std::array<std::uint32_t, 4> state_words(const Block& block) {
  std::array<std::uint32_t, 4> w{};
  for (std::size_t i = 0; i < 4; ++i) {
    w[i] = (std::uint32_t{block[4 * i]} << 24) | (std::uint32_t{block[4 * i + 1]} << 16) |
           (std::uint32_t{block[4 * i + 2]} << 8) | std::uint32_t{block[4 * i + 3]};
  }
  return w;
}

}  // namespace paes::gpu
