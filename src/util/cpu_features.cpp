#include "util/cpu_features.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace paes {

#if defined(__x86_64__) || defined(__i386__)
namespace {

// XCR0, the register state the OS saves on a context switch; 0 where the OS
// has not enabled XSAVE (no AVX state then). Read with the instruction's
// bytes, so that no file needs -mxsave.
unsigned long long os_saved_state() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || (ecx & bit_OSXSAVE) == 0) return 0;
  unsigned lo = 0, hi = 0;
  __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0));  // xgetbv
  return (static_cast<unsigned long long>(hi) << 32) | lo;
}

}  // namespace
#endif

CpuFeatures detect_cpu_features() {
  CpuFeatures features;
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
    features.aes_ni = (ecx & bit_AES) != 0;
    features.pclmulqdq = (ecx & bit_PCLMUL) != 0;
  }
  const unsigned long long xcr0 = os_saved_state();
  constexpr unsigned long long kAvxState = 0x6;     // XMM and YMM registers
  constexpr unsigned long long kAvx512State = 0xe6;  // and the opmask and ZMM registers
  const bool avx_saved = (xcr0 & kAvxState) == kAvxState;
  const bool avx512_saved = (xcr0 & kAvx512State) == kAvx512State;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) {
    features.avx2 = avx_saved && (ebx & bit_AVX2) != 0;
    features.avx512f = avx512_saved && (ebx & bit_AVX512F) != 0;
    features.avx512bw = avx512_saved && (ebx & bit_AVX512BW) != 0;
    features.avx512vbmi = avx512_saved && (ecx & bit_AVX512VBMI) != 0;
    features.vaes = (ecx & bit_VAES) != 0;
    features.vpclmulqdq = (ecx & bit_VPCLMULQDQ) != 0;
  }
#endif
  return features;
}

}  // namespace paes
