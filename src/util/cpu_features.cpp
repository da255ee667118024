#include "util/cpu_features.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace paes {

CpuFeatures detect_cpu_features() {
  CpuFeatures features;
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
    features.aes_ni = (ecx & bit_AES) != 0;
    features.pclmulqdq = (ecx & bit_PCLMUL) != 0;
  }
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) {
    features.avx2 = (ebx & bit_AVX2) != 0;
    features.avx512f = (ebx & bit_AVX512F) != 0;
    features.vaes = (ecx & bit_VAES) != 0;
    features.vpclmulqdq = (ecx & bit_VPCLMULQDQ) != 0;
  }
#endif
  return features;
}

}  // namespace paes
