// AES on an OpenCL device: the OpenCL GpuApi (cipher/gpu/gpu_backend.hpp).
// Here: the devices of every platform, the kernels of kernels.cl built by the
// OpenCL driver at run time once per device, and the lanes: each one a
// command queue with its own kernel objects (clSetKernelArg is the one
// OpenCL call that is not thread-safe) and its own round-key buffer, so that
// workers on different threads drive their lanes at once.
//
// This header does not include the OpenCL headers; users need neither them
// nor the ICD loader's declarations.
#pragma once

#include <string>

#include "cipher/gpu/gpu_backend.hpp"

namespace paes {

GpuApi opencl_api();

namespace gpu {

// The symbolic name of an OpenCL error code ("CL_OUT_OF_RESOURCES").
std::string opencl_error_name(int code);

}  // namespace gpu

}  // namespace paes
