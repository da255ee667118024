#pragma once

namespace paes {

// What this CPU runs. The vector extensions (AVX2, AVX-512) count only where
// the OS also saves their registers (XCR0), since without that their code faults.
struct CpuFeatures {
  bool aes_ni = false;
  bool pclmulqdq = false;
  bool vaes = false;
  bool vpclmulqdq = false;
  bool avx2 = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vbmi = false;
};

CpuFeatures detect_cpu_features();

}  // namespace paes
