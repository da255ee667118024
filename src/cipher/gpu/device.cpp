#include "cipher/gpu/device.hpp"

#include <string>

namespace paes::gpu {

Error no_such_device(const char* api, unsigned index, std::size_t count) {
  const std::string which = count == 1 ? "one " + std::string(api) + " device, --device 0"
                                       : std::to_string(count) + " " + api + " devices, --device 0 to " +
                                             std::to_string(count - 1);
  return usage_error("--device " + std::to_string(index) + ": this machine has " + which + " (see paes info)");
}

}  // namespace paes::gpu
