// GCC's OpenMP runtime, libgomp, opened at the threads engine's first
// parallel region rather than linked. Linked, every run mapped, relocated and
// set it up, 0.1 ms: 4% of a 2 KiB job, which runs on the calling thread and
// never starts a team (docs/PERFORMANCE.md, section 8).
//
// GCC compiles threads_engine.cpp's `#pragma omp` into calls of libgomp's
// entry points; the definitions here take those calls and forward each to
// libgomp's own, opened at the first (util/shared_library.hpp). They are the
// entry points that file's one region calls, with libgomp's signatures
// (libgomp_g.h, omp.h). A pragma that needs another one fails to link with
// an undefined GOMP_ symbol: forward it here too.
//
// Hidden: a shared libpaes exports none of them, so the look-up of libgomp's
// own (in the global scope) never finds these. Built with GCC only (CMake's
// PAES_OPENMP_AT_FIRST_USE): clang's OpenMP calls another runtime's entry
// points (LLVM's __kmpc_*), and a clang build links that runtime.
#include <omp.h>

#include "util/shared_library.hpp"

#define PAES_FORWARDED __attribute__((visibility("hidden")))

extern "C" {
PAES_FORWARDED void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);
PAES_FORWARDED bool GOMP_single_start();
PAES_FORWARDED bool GOMP_loop_nonmonotonic_dynamic_start(long start, long end, long incr, long chunk_size,
                                                         long* istart, long* iend);
PAES_FORWARDED bool GOMP_loop_nonmonotonic_dynamic_next(long* istart, long* iend);
PAES_FORWARDED void GOMP_loop_end_nowait();
}

namespace paes {
namespace {

struct GompFunctions : LibraryFunctions<GompFunctions> {
  static constexpr const char* kSoname = "libgomp.so.1";
  static constexpr const char* kNeededFor = "the threads engine runs its workers with OpenMP (libgomp)";
  PAES_LIBRARY_MEMBER(GOMP_parallel);
  PAES_LIBRARY_MEMBER(GOMP_single_start);
  PAES_LIBRARY_MEMBER(GOMP_loop_nonmonotonic_dynamic_start);
  PAES_LIBRARY_MEMBER(GOMP_loop_nonmonotonic_dynamic_next);
  PAES_LIBRARY_MEMBER(GOMP_loop_end_nowait);
  PAES_LIBRARY_MEMBER(omp_get_num_threads);
  PAES_LIBRARY_MEMBER(omp_get_thread_num);
};

// Opened by GOMP_parallel, which starts every region: the calls made inside
// one find it open. A missing libgomp is an Error from GOMP_parallel, thrown
// before any team exists.
const GompFunctions& gomp() { return GompFunctions::get(); }

}  // namespace
}  // namespace paes

extern "C" {

void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) {
  paes::gomp().GOMP_parallel(fn, data, num_threads, flags);
}

bool GOMP_single_start() { return paes::gomp().GOMP_single_start(); }

bool GOMP_loop_nonmonotonic_dynamic_start(long start, long end, long incr, long chunk_size, long* istart,
                                          long* iend) {
  return paes::gomp().GOMP_loop_nonmonotonic_dynamic_start(start, end, incr, chunk_size, istart, iend);
}

bool GOMP_loop_nonmonotonic_dynamic_next(long* istart, long* iend) {
  return paes::gomp().GOMP_loop_nonmonotonic_dynamic_next(istart, iend);
}

void GOMP_loop_end_nowait() { paes::gomp().GOMP_loop_end_nowait(); }

PAES_FORWARDED int omp_get_num_threads() __GOMP_NOTHROW { return paes::gomp().omp_get_num_threads(); }

PAES_FORWARDED int omp_get_thread_num() __GOMP_NOTHROW { return paes::gomp().omp_get_thread_num(); }

}  // extern "C"
