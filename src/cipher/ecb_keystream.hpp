// Keystream helpers shared by the CPU backends: XOR of a keystream into data,
// and CFB128 decryption as the ECB encryption of the ciphertext shifted by one
// block. Since P[i] = C[i] ^ E(C[i-1]) with C[-1] = IV, that keystream needs
// no chaining, so a backend runs it at its full interleaved ECB speed (EVP's
// CFB is not interleaved: about 0.5 GB/s a core; ipsec-mb has no CFB at all).
// It goes tile by tile into a keystream buffer that stays in L1.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cipher/backend.hpp"

namespace paes {

// out = in ^ keystream for `len` bytes (out may be in).
void xor_into(std::uint8_t* out, const std::uint8_t* in, const std::uint8_t* keystream,
              std::size_t len);

// CFB128 decryption over a backend's ECB encryption: a backend derives from it
// and supplies ecb_encrypt.
class EcbKeystreamCfb128Decrypt : public RawCipher {
 public:
  // Big enough to amortise one library call per tile, small enough to stay
  // in L1, and under ipsec-mb's 65,534-byte cap on one ECB job.
  static constexpr std::size_t kTileLen = 16 * 1024;

  void begin(const Block& start_state) final {
    feedback_ = start_state;
    used_ = 0;
  }
  // Pieces may end inside a block (a stream's reads, a caller's own cuts):
  // the next piece finishes that block first.
  void update(std::uint8_t* out, const std::uint8_t* in, std::size_t len) final;

 protected:
  // ECB-encrypts `len` bytes (whole blocks, at most kTileLen) of `in` into `out`.
  virtual void ecb_encrypt(std::uint8_t* out, const std::uint8_t* in, std::size_t len) = 0;

 private:
  Block feedback_{};  // the previous ciphertext block
  // A block a piece ended inside: its keystream, its ciphertext so far, and
  // how many of its bytes are done (0: none pending).
  Block pending_keystream_{};
  Block pending_ciphertext_{};
  std::size_t used_ = 0;
  alignas(64) std::uint8_t tile_[kTileLen];
};

}  // namespace paes
