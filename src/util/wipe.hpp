// Wiping memory that a secret passed through but that SecretBytes doesn't
// own: another library's buffers (libssh hands its exports back in memory of
// its own), before they are freed.
#pragma once

#include <cstddef>

namespace paes {

// Overwrites `len` bytes at `data` with zeros in a way the compiler keeps
// (OPENSSL_cleanse). A null `data` is nothing to wipe.
void wipe_bytes(void* data, std::size_t len) noexcept;

}  // namespace paes
