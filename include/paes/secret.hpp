// Bytes that must not outlive their use: keys and passphrases. The storage
// lives in OpenSSL's secure heap (locked in RAM where allowed, excluded from
// core dumps, between guard pages), is wiped when the object is destroyed or
// reassigned, and the type refuses implicit copies so a key is never
// duplicated by accident.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace paes {

class SecretBytes {
 public:
  SecretBytes() = default;
  explicit SecretBytes(std::size_t len);
  SecretBytes(const std::uint8_t* data, std::size_t len);
  ~SecretBytes();
  SecretBytes(SecretBytes&& other) noexcept;
  SecretBytes& operator=(SecretBytes&& other) noexcept;
  SecretBytes(const SecretBytes&) = delete;
  SecretBytes& operator=(const SecretBytes&) = delete;

  std::uint8_t* data() noexcept { return bytes_; }
  const std::uint8_t* data() const noexcept { return bytes_; }
  std::size_t size() const noexcept { return len_; }
  bool empty() const noexcept { return len_ == 0; }
  std::span<const std::uint8_t> view() const noexcept { return {bytes_, len_}; }
  SecretBytes clone() const { return SecretBytes(data(), size()); }

 private:
  void release() noexcept;
  std::uint8_t* bytes_ = nullptr;
  std::size_t len_ = 0;
};

// Overwrites bytes that held a secret outside SecretBytes (a message that
// carried a key through a pipe, another library's buffer before it is
// freed) so that the compiler can't skip it; the string is left empty.
void wipe(std::span<std::uint8_t> bytes) noexcept;
void wipe(std::string& text) noexcept;

// Fills `out` from the OS CSPRNG through OpenSSL (keys, salts, nonces).
// Throws Error when the generator fails.
void random_bytes(std::span<std::uint8_t> out);

}  // namespace paes
