// OpenSSL set up for a process that runs one command and ends (paes' CLI),
// before OpenSSL's first use would set it up its default way.
#pragma once

namespace paes {

// What it leaves out (docs/PERFORMANCE.md, "Start-up"):
// - no clean-up at exit: the process's end frees what OpenSSL holds, and its
//   clean-up was a tenth of a millisecond of every run (kept under
//   AddressSanitizer, whose leak checker would report what it frees);
// - the configuration file only where OPENSSL_CONF names one. The system's
//   (Debian's openssl.cnf) sets TLS policy, nothing paes' algorithms use,
//   and reading it was another tenth; one a user names (a provider to load)
//   is read as before;
// - no tables of legacy cipher and digest names (EVP_get_cipherbyname's;
//   paes fetches from the provider, and the ssh key reader names the few
//   ciphers PEM keys use: name_pem_key_ciphers), and no error strings: an
//   OpenSSL error paes reports (an internal failure) is worded by its
//   codes. 0.4 ms.
// Call it once, before anything uses OpenSSL and after descriptors 0, 1 and
// 2 are open (a configuration file it reads must not become one of them).
void set_up_openssl_for_one_command();

}  // namespace paes
