// AES on an OpenCL device: the OpenCL adapter of the GPU driver
// (engine/gpu/gpu_driver.hpp), which does the batching, chaining, padding,
// checks and the pipeline of batches in flight for every device. Here: the
// device, its queues and buffers, and the kernels of src/gpu/kernels.cl,
// built by the OpenCL driver at run time.
//
// This header does not include the OpenCL headers; users of the class need
// neither them nor the ICD loader's declarations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/gpu/gpu_driver.hpp"
#include "paes/mode.hpp"

namespace paes {

// One OpenCL device as `paes info` lists it. `index` counts devices over all
// platforms in the order the ICD loader reports them; --device takes it.
struct OpenClDeviceInfo {
  unsigned index = 0;
  std::string platform;
  std::string name;
  std::string vendor;
  std::string version;  // CL_DEVICE_VERSION, e.g. "OpenCL 3.0 PoCL ..."
  std::string type;     // "gpu", "cpu", "accelerator" or "other"
  unsigned compute_units = 0;
  std::uint64_t global_mem_bytes = 0;
  std::uint64_t local_mem_bytes = 0;
  std::size_t max_work_group_size = 0;
};

// Every device of every platform; empty when there is no OpenCL platform (no
// ICD installed). Throws Error only on a failing OpenCL call past that.
std::vector<OpenClDeviceInfo> list_opencl_devices();

// The symbolic name of an OpenCL error code ("CL_OUT_OF_RESOURCES").
std::string opencl_error_name(int code);

// The driver's options (batch bytes, lanes: one command queue each, with a
// pinned host buffer and two device buffers; profile: profiling events), and
// the device's own.
struct OpenClOptions : GpuDriverOptions {
  // Index from list_opencl_devices(); unset: the first GPU, else the first device.
  std::optional<unsigned> device_index;
  // Blocks each work-item transforms (the global size is about
  // batch blocks / blocks_per_item).
  unsigned blocks_per_item = 8;
  // Work-group size; 0: min(256, what the device and kernel allow).
  std::size_t local_size = 0;
};

// The driver on an OpenCL device. Constructing it picks the device, builds
// the program (Error with the build log when that fails), allocates the
// lanes' buffers and runs the AES self-test there. Throws Error when there is
// no device or it fails the self-test, and a usage Error for a device index
// that doesn't exist.
class OpenClEngine final : public GpuDriver {
 public:
  explicit OpenClEngine(const OpenClOptions& options = {});
  const OpenClDeviceInfo& device() const;
};

}  // namespace paes
