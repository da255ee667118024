// PKCS#7 padding exactly as openssl enc applies it to ECB and CBC.
#pragma once

#include <cstddef>
#include <cstdint>

#include "paes/error.hpp"
#include "paes/mode.hpp"

namespace paes {

class RawCipher;

// The final block of a padded message: the last tail_len (< 16) bytes of
// plaintext followed by 16 - tail_len bytes of value 16 - tail_len.
Block pkcs7_final_block(const std::uint8_t* tail, std::size_t tail_len);

// Invalid padding at the end of a decrypted message: a wrong key (or IV), or
// corrupted data; a caller that knows where the key came from may say more.
class BadPaddingError : public Error {
 public:
  using Error::Error;
};

// Length of the padding at the end of decrypted `block` (its last 16 bytes),
// 1 to 16. Throws BadPaddingError "bad decrypt: wrong key or corrupted data"
// when the bytes aren't valid padding.
std::size_t pkcs7_pad_len(const std::uint8_t* last_block);

// Throws the error for a whole message of `len` bytes that the mode can't
// take, as every engine words it: ECB/CBC ciphertext not whole blocks
// ("not cbc ciphertext, or truncated"), --no-pad plaintext not whole blocks,
// and padded ciphertext that is empty.
void check_message_length(Mode mode, Direction direction, bool padded, std::uint64_t len);

// The next piece of a chunk through a backend's `cipher`, as openssl enc does
// it: `out` may equal `in`; every piece but the final one of a padded (ECB,
// CBC) job must be whole blocks. On the final piece of a padded job (`padded`:
// CipherSpec::padded()), encryption appends the PKCS#7 block (`out` holds
// len + 16 bytes) and decryption checks and strips it. Returns the bytes
// written. Throws Error on bad padding.
std::size_t padded_update(RawCipher& cipher, Mode mode, Direction direction, bool padded,
                          std::uint8_t* out, const std::uint8_t* in, std::size_t len,
                          bool final_piece);

}  // namespace paes
