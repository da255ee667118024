/* Compiles the portable AES core and kernel bodies as C (not C++), proving
 * they stay within the C subset that OpenCL C and CUDA share; core_test.cpp
 * and host_kernels_test.cpp call these wrappers and compare them with the C++
 * instantiation and OpenSSL. */
#include "cipher/gpu/aes_kernels.h"

void paes_c_encrypt_block(const uint32_t* rk, int nr, const uint32_t* te0, uint32_t* s);
void paes_c_decrypt_block(const uint32_t* rk, int nr, const uint32_t* td0,
                          const uint32_t* inv_sbox, uint32_t* s);
void paes_c_ctr_body(uint64_t b, const unsigned char* in, unsigned char* out, uint64_t nbytes,
                     uint64_t first_block, const uint32_t* counter0, const uint32_t* column,
                     const uint32_t* rk, int nr);

void paes_c_encrypt_block(const uint32_t* rk, int nr, const uint32_t* te0, uint32_t* s) {
  paes_encrypt_block(rk, nr, te0, s);
}

void paes_c_decrypt_block(const uint32_t* rk, int nr, const uint32_t* td0,
                          const uint32_t* inv_sbox, uint32_t* s) {
  paes_decrypt_block(rk, nr, td0, inv_sbox, s);
}

void paes_c_ctr_body(uint64_t b, const unsigned char* in, unsigned char* out, uint64_t nbytes,
                     uint64_t first_block, const uint32_t* counter0, const uint32_t* column,
                     const uint32_t* rk, int nr) {
  paes_ctr_body(b, in, out, nbytes, first_block,
                paes_make_u32x4(counter0[0], counter0[1], counter0[2], counter0[3]), column, rk,
                nr);
}
