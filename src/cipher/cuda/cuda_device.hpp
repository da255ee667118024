// AES on a CUDA device: the CUDA GpuApi (cipher/gpu/gpu_backend.hpp). Here:
// the devices, the kernels of kernels.cu and the lanes: each one a
// non-blocking stream with a page-locked host buffer and device input and
// output buffers, so that batches on different lanes overlap (GPUs have a
// copy engine for each direction). Every lane call makes the device current
// on the calling thread first: the engines' workers drive the lanes, and the
// current device is per host thread.
//
// This header does not include the CUDA headers; users need neither them nor
// the toolkit.
#pragma once

#include "cipher/gpu/gpu_backend.hpp"

namespace paes {

GpuApi cuda_api();

}  // namespace paes
