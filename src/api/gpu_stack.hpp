// What --engine auto can know of this machine's GPU stack without starting a
// driver.
//
// Asking CUDA or OpenCL which devices there are starts their drivers: cuInit,
// and every installed OpenCL platform (PoCL alone loads LLVM: 20 ms on the
// 2-core CI machine). Auto would pay that on every job large enough for a
// GPU, even one the CPU then runs, and 5% of a one-second job is 50 ms. So
// what auto measured is kept under a fingerprint of the stack read from the
// file system and the environment, which costs well under a millisecond:
//
//   - the GPU device nodes (/dev/nvidia*, /dev/kfd, /dev/dri/*), which any
//     CUDA, ROCm or GPU OpenCL device needs, even in a container;
//   - the NVIDIA kernel driver's version and GPUs (/proc/driver/nvidia);
//   - the OpenCL ICD files (OCL_ICD_VENDORS or /etc/OpenCL/vendors): name,
//     size, time and the library each names;
//   - the variables that steer the drivers or what gets loaded
//     (CUDA_VISIBLE_DEVICES, OCL_ICD_FILENAMES, POCL_DEVICES, LD_PRELOAD, ...);
//   - paes itself: the cipher backends it was built with, and the size and time of
//     the library or program its code lies in.
//
// Installing, updating or removing a driver or paes, adding a GPU or changing
// one of those variables changes the fingerprint, and auto looks and
// measures again.
// A change it misses can only cost speed, never bytes: a kept verdict that
// names a device that is gone fails to start it, and auto runs the job on the
// CPU with a warning, as for any device that fails.
#pragma once

#include <string>

namespace paes {

// 16 hex digits (64 bits of a SHA-256 of the facts above).
std::string gpu_stack_fingerprint();

}  // namespace paes
