// Intel's ipsec-mb as a cipher backend, in builds that found it
// (PAES_HAVE_IPSEC_MB): CTR, ECB, CBC and CFB128 decryption, and AES-GCM, at
// up to 4x OpenSSL 3.0's speed a core on VAES CPUs. Only cipher/backends.cpp
// names it; its library's types stay in this folder.
#pragma once

#include <cstdint>

#include "cipher/backend.hpp"

namespace paes {

const CipherBackend& ipsec_mb_backend();

// Whether `--backend auto` takes ipsec-mb over OpenSSL on a CPU for which
// ipsec-mb's best code path (its "arch", IMB_ARCH_*) is `arch` and its feature
// flags (IMB_FEATURE_*) are `features`: only where it runs VAES and VPCLMULQDQ
// (AVX-512 arch), the CPUs on which it was measured 2-4x faster. Elsewhere
// OpenSSL runs, so auto is never slower than OpenSSL.
bool ipsec_mb_chosen_by_auto(int arch, std::uint64_t features);

}  // namespace paes
