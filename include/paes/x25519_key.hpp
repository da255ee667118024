// An X25519 public key as a value: the type age's keys (paes/age_keys.hpp),
// the sealed format's recipients (paes/sealed.hpp) and X25519 itself
// (src/cipher/x25519.hpp) share.
#pragma once

#include <array>
#include <cstdint>

namespace paes {

// An X25519 public key (a recipient), 32 bytes as RFC 7748 encodes it.
using X25519PublicKey = std::array<std::uint8_t, 32>;

}  // namespace paes
