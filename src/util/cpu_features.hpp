#pragma once

namespace paes {

struct CpuFeatures {
  bool aes_ni = false;
  bool pclmulqdq = false;
  bool vaes = false;
  bool vpclmulqdq = false;
  bool avx2 = false;
  bool avx512f = false;
};

CpuFeatures detect_cpu_features();

}  // namespace paes
