// OpenSSL's own one-shot transform of a whole buffer through one EVP context:
// the reference paes is tested against and the baseline `paes bench` reports.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "paes/mode.hpp"

namespace paes {

// Same contract as openssl enc: PKCS#7 for padded specs. Throws Error on bad
// padding or a length the mode can't take.
std::vector<std::uint8_t> openssl_oneshot(const CipherSpec& spec,
                                          std::span<const std::uint8_t> in);

// The same into a caller's buffer (in.size() + 16 bytes), for benchmarks that
// must not time an allocation. Returns the output length.
std::size_t openssl_oneshot_into(const CipherSpec& spec, std::uint8_t* out,
                                 std::span<const std::uint8_t> in);

// OpenSSL's one-shot AES-GCM over a whole buffer (zero nonce, no AAD): the
// baseline of the sealed format in `paes bench`. Encryption writes the
// ciphertext and the 16-byte tag after it; decryption takes them and throws
// Error when the tag doesn't verify. Returns the output length.
std::size_t openssl_gcm_oneshot_into(const SecretBytes& key, Direction direction, std::uint8_t* out,
                                     std::span<const std::uint8_t> in);

}  // namespace paes
