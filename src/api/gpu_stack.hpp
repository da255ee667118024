// What --engine auto can know of this machine's GPU stack without starting a
// driver.
//
// Asking a GPU API which devices there are starts its driver (and an ICD
// loader loads every installed platform: PoCL alone loads LLVM, 20 ms on
// the 2-core CI machine). Auto would pay that on every job large
// enough for a GPU, even one the CPU then runs, and 5% of a one-second job is
// 50 ms. So what auto measured is kept under a fingerprint of the stack read
// from the file system and the environment, which costs well under a
// millisecond:
//
//   - each GPU API's own facts (GpuApi::stack_facts, in its folder): its
//     device nodes, its kernel driver's version and GPUs, its ICD files, and
//     the variables that steer it;
//   - the variables that steer what gets loaded (LD_PRELOAD, LD_LIBRARY_PATH);
//   - paes itself: the cipher backends it was built with, and the size and
//     time of the library or program its code lies in.
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
