// openssl enc -pbkdf2's "Salted__" header on arbitrary bytes, then the
// decryption paes decrypt --pbkdf2 runs after it: the key and IV from PBKDF2
// (one iteration here, to stay fast) and the raw mode over the rest of the
// input in memory, padding checks included. The input's first byte picks the
// variant:
//
//   bits 0-2   the mode, kAllModes[bits % 7]
//   bit 3      --no-pad
//   bits 4-5   the key size: 128, 192, 256, 256 bits
//
// fuzz/make_corpus.py writes the seeds with openssl enc -pbkdf2 -iter 1 and
// the passphrase kPassphrase.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "format/salted_header.hpp"
#include "paes/error.hpp"
#include "paes/transform.hpp"

namespace {

constexpr char kPassphrase[] = "fuzz";

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_salted_header: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t variant = data[0];
  const std::span<const std::uint8_t> input(data + 1, size - 1);
  try {
    const paes::SaltedSalt salt = paes::decode_salted_header(input, "fuzz");
    const auto encoded = paes::encode_salted_header(salt);
    require(std::equal(encoded.begin(), encoded.end(), input.begin()), "header does not encode back");

    paes::CipherSpec base;
    base.mode = paes::kAllModes[(variant & 7) % std::size(paes::kAllModes)];
    base.direction = paes::Direction::decrypt;
    base.padding = (variant & 8) == 0;
    constexpr std::size_t kKeyLens[] = {16, 24, 32, 32};
    paes::Pbkdf2Key pbkdf2;
    pbkdf2.passphrase = paes::SecretBytes(reinterpret_cast<const std::uint8_t*>(kPassphrase), sizeof kPassphrase - 1);
    pbkdf2.iterations = 1;
    pbkdf2.key_len = kKeyLens[(variant >> 4) & 3];
    const paes::CipherSpec spec = paes::salted_cipher_spec(base, pbkdf2, salt);

    const auto ciphertext = input.subspan(paes::kSaltedHeaderLen);
    std::vector<std::uint8_t> plaintext(ciphertext.size());
    paes::TransformOptions options;
    options.engine = paes::EngineKind::serial;
    const std::uint64_t produced = paes::transform_memory(spec, plaintext, ciphertext, options);
    require(produced <= ciphertext.size(), "decryption produced more bytes than it was given");
  } catch (const paes::Error&) {
  }
  return 0;
}
