/* Compiles the portable AES core as C (not C++), proving it stays within the
 * C subset that OpenCL C and CUDA share; core_test.cpp calls these wrappers
 * and compares them with the C++ instantiation and OpenSSL. */
#include "gpu/aes_core.h"

void paes_c_encrypt_block(const uint32_t* rk, int nr, const uint32_t* te0, uint32_t* s);
void paes_c_decrypt_block(const uint32_t* rk, int nr, const uint32_t* td0, const uint32_t* td4,
                          uint32_t* s);

void paes_c_encrypt_block(const uint32_t* rk, int nr, const uint32_t* te0, uint32_t* s) {
  paes_encrypt_block(rk, nr, te0, s);
}

void paes_c_decrypt_block(const uint32_t* rk, int nr, const uint32_t* td0, const uint32_t* td4,
                          uint32_t* s) {
  paes_decrypt_block(rk, nr, td0, td4, s);
}
