// The AES work on one chunk of a raw mode, exactly as openssl enc does it: one
// ChunkCipher per thread. The AES itself comes from the cipher backend the
// caller's choice resolves to for the spec (paes/backend.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "paes/backend_choice.hpp"
#include "paes/mode.hpp"

namespace paes {

class ChunkCipher {
 public:
  // Expands the key once; throws Error if the backend can't set up the
  // cipher, and check_backend_choice's usage Errors.
  explicit ChunkCipher(const CipherSpec& spec, const BackendChoice& backend = {});
  ~ChunkCipher();
  ChunkCipher(const ChunkCipher&) = delete;
  ChunkCipher& operator=(const ChunkCipher&) = delete;

  // Starts a chunk from the state its plan gives (ignored for ECB).
  void begin(const Block& start_state);

  // Transforms the next `in_len` bytes of the current chunk into `out`, which
  // may equal `in`. Every piece but the final one of a padded (ECB/CBC) job
  // must be a whole number of blocks. On the final piece of a padded job,
  // encryption appends the PKCS#7 block (`out` must hold in_len + 16 bytes) and
  // decryption checks and strips it. Returns the bytes written to `out`.
  // Throws Error on bad padding ("bad decrypt: wrong key or corrupted data").
  std::size_t update(std::uint8_t* out, const std::uint8_t* in, std::size_t in_len,
                     bool final_piece);

  // Which implementation runs, for tests and diagnostics (e.g. "openssl-evp",
  // "openssl-ecb-keystream" for OpenSSL's CFB128 decryption fast path).
  const char* implementation() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace paes
