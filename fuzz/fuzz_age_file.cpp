// Arbitrary bytes opened as an age file with a fixed X25519 identity: the
// version line, armor (age's PEM), age's header of stanzas, the X25519
// stanza's unwrap, the header MAC, the payload nonce, and AgeChunks'
// grouping, length checks and ChaCha20-Poly1305 opening of every chunk. The
// input's first byte picks the reader:
//
//   bit 0   0: run_sealed, paes decrypt's front door, reading a file (a
//              memfd) with pread on the serial engine, to /dev/null
//           1: open_age_bytes, which opens an age -p identity file in memory
//
// fuzz/make_corpus.py seals the seeds to kIdentity's recipient (paes and age
// files, binary and armored), so the fuzzer starts from inputs that verify.
#include <cstdint>
#include <span>
#include <string>

#include "memfd_input.hpp"
#include "paes/error.hpp"
#include "paes/sealed.hpp"

namespace {

// The X25519 secret of the seeds' recipient: bytes 32 to 63.
constexpr std::uint8_t kIdentity[32] = {32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
                                        48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t variant = data[0];
  paes::SealedSpec spec;
  spec.direction = paes::Direction::decrypt;
  spec.format = paes::SealedFormat::age;
  spec.identities.emplace_back(paes::SecretBytes(kIdentity, sizeof kIdentity));
  try {
    if ((variant & 1) != 0) {
      paes::open_age_bytes(spec, std::span(data + 1, size - 1), "fuzz");
    } else {
            paes::TransformOptions options;
      options.engine = paes::EngineKind::serial;
      options.force = true;
      const std::string input = paes::fuzz::memfd_input("fuzz_age_file", data + 1, size - 1);
      paes::run_sealed(spec, input, "/dev/null", options);
    }
  } catch (const paes::Error&) {
  }
  return 0;
}
