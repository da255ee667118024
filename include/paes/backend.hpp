// Which library runs AES on the CPU: OpenSSL's EVP (every mode, every CPU) or,
// where the build found it, Intel's ipsec-mb (CTR, ECB, CBC and CFB128
// decryption, and the sealed format's AES-GCM, 2-4x faster a core than
// OpenSSL 3.0 on CPUs with VAES). Both give the same bytes; the choice is only
// about speed. One choice per process, made before the jobs it governs: a job
// takes its backend when it is made.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "paes/mode.hpp"

namespace paes {

// "auto": ipsec-mb where it is built in and this CPU runs its VAES code,
// otherwise OpenSSL. The default.
inline constexpr std::string_view kAutoBackend = "auto";

struct CipherBackendInfo {
  std::string name;         // "openssl", "ipsec-mb"
  bool built_in = false;    // compiled into this library
  bool available = false;   // built in, and this machine runs it
  bool chosen_by_auto = false;  // what `auto` runs here (OpenSSL still runs what it lacks)
  std::string detail;       // version and code path ("1.3.0, avx512 with VAES, VPCLMULQDQ")
  std::string why_not;      // why it is not available
};

// Every backend paes knows, built in or not, in order of preference.
std::vector<CipherBackendInfo> cipher_backends_info();

// Sets the process's choice: kAutoBackend or a backend's name. A named backend
// runs every mode and direction it supports; the rest (e.g. CBC encryption
// under ipsec-mb) run on OpenSSL. Throws a usage Error (exit 2) for an unknown
// name, a backend not built in, or one this machine can't run, saying which.
// Jobs made before the call keep their backend.
void select_cipher_backend(std::string_view name);
// kAutoBackend or the name last selected.
std::string selected_cipher_backend();

// The backend a job made now would run: for a raw mode's direction, and for
// the sealed format's segments.
std::string raw_backend_name(Mode mode, Direction direction);
std::string segment_backend_name();

}  // namespace paes
