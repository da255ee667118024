#include "util/bech32.hpp"

#include <openssl/crypto.h>

#include <array>
#include <cctype>
#include <vector>

namespace paes {
namespace {

constexpr std::string_view kCharset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";

std::uint32_t polymod_step(std::uint32_t chk, std::uint8_t value) {
  constexpr std::array<std::uint32_t, 5> kGenerator = {0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3};
  const std::uint32_t top = chk >> 25;
  chk = ((chk & 0x1ffffff) << 5) ^ value;
  for (int i = 0; i < 5; ++i) {
    if ((top >> i) & 1) chk ^= kGenerator[i];
  }
  return chk;
}

// The checksum's running value over the expanded human-readable part.
std::uint32_t hrp_polymod(std::string_view hrp) {
  std::uint32_t chk = 1;
  for (const char c : hrp) chk = polymod_step(chk, static_cast<std::uint8_t>(static_cast<unsigned char>(c) >> 5));
  chk = polymod_step(chk, 0);
  for (const char c : hrp) chk = polymod_step(chk, static_cast<std::uint8_t>(c & 31));
  return chk;
}

// 5-bit groups held in secure memory: for an identity they are the key.
struct Groups {
  explicit Groups(std::size_t n) : bytes(n) {}
  SecretBytes bytes;
  std::size_t size() const { return bytes.size(); }
  std::uint8_t& operator[](std::size_t i) { return bytes.data()[i]; }
};

}  // namespace

std::optional<Bech32Text> bech32_decode(std::string_view text) {
  bool lower = false;
  bool upper = false;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 33 || u > 126) return std::nullopt;
    lower |= std::islower(u) != 0;
    upper |= std::isupper(u) != 0;
  }
  if (lower && upper) return std::nullopt;
  const std::size_t separator = text.rfind('1');
  if (separator == std::string_view::npos || separator == 0 || separator + 7 > text.size()) return std::nullopt;
  std::string hrp(text.substr(0, separator));
  for (char& c : hrp) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string_view data_text = text.substr(separator + 1);
  Groups groups(data_text.size());
  std::uint32_t chk = hrp_polymod(hrp);
  for (std::size_t i = 0; i < data_text.size(); ++i) {
    const std::size_t value = kCharset.find(static_cast<char>(std::tolower(static_cast<unsigned char>(data_text[i]))));
    if (value == std::string_view::npos) return std::nullopt;
    groups[i] = static_cast<std::uint8_t>(value);
    chk = polymod_step(chk, groups[i]);
  }
  if (chk != 1) return std::nullopt;
  // The groups without the checksum, regrouped into bytes.
  const std::size_t group_count = groups.size() - 6;
  const std::size_t byte_count = group_count * 5 / 8;
  Bech32Text out{std::move(hrp), SecretBytes(byte_count)};
  std::uint32_t acc = 0;
  int bits = 0;
  std::size_t filled = 0;
  for (std::size_t i = 0; i < group_count; ++i) {
    acc = ((acc << 5) | groups[i]) & 0xfff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.data.data()[filled++] = static_cast<std::uint8_t>(acc >> bits);
    }
  }
  const bool clean_end = bits < 5 && (acc & ((1u << bits) - 1)) == 0;
  OPENSSL_cleanse(&acc, sizeof acc);
  if (!clean_end) return std::nullopt;
  return out;
}

SecretBytes bech32_encode(std::string_view hrp, std::span<const std::uint8_t> data, bool upper) {
  Groups groups((data.size() * 8 + 4) / 5 + 6);
  std::size_t n = 0;
  std::uint32_t acc = 0;
  int bits = 0;
  for (const std::uint8_t byte : data) {
    acc = ((acc << 8) | byte) & 0xfff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      groups[n++] = static_cast<std::uint8_t>((acc >> bits) & 31);
    }
  }
  if (bits > 0) groups[n++] = static_cast<std::uint8_t>((acc << (5 - bits)) & 31);
  OPENSSL_cleanse(&acc, sizeof acc);
  std::uint32_t chk = hrp_polymod(hrp);
  for (std::size_t i = 0; i < n; ++i) chk = polymod_step(chk, groups[i]);
  for (int i = 0; i < 6; ++i) chk = polymod_step(chk, 0);
  chk ^= 1;
  for (int i = 0; i < 6; ++i) groups[n + i] = static_cast<std::uint8_t>((chk >> (5 * (5 - i))) & 31);

  SecretBytes text(hrp.size() + 1 + groups.size());
  std::uint8_t* p = text.data();
  const auto put = [&](char c) {
    *p++ = static_cast<std::uint8_t>(upper ? std::toupper(static_cast<unsigned char>(c)) : c);
  };
  for (const char c : hrp) put(c);
  put('1');
  for (std::size_t i = 0; i < groups.size(); ++i) put(kCharset[groups[i]]);
  return text;
}

}  // namespace paes
