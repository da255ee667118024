// Arbitrary bytes decrypted with a fixed key through the front door paes
// decrypt uses, run_sealed(): preamble, Tink header, HKDF, SegmentJob's
// segment splitting and length checks, and AES-GCM opening of every segment,
// read with pread from a file (a memfd) and written to /dev/null by the
// serial engine. The input's first byte picks the variant:
//
//   bit 0      0: a paes file (its preamble gives the key and segment size)
//              1: a bare Tink stream (--format tink)
//   bit 1      Tink: a 16-byte key instead of 32 bytes
//   bit 2      --aad "fuzz" instead of none
//   bits 3-7   Tink: the segment size, kTinkSegmentLens[bits % its size]
//
// The key is kKey, or its first 16 bytes for a Tink stream with bit 1 set and
// for a paes file whose preamble says AES-128 (the right key for the file,
// as a user would give it). fuzz/make_corpus.py seals the seeds with it, so
// the fuzzer starts from inputs that verify.
#include <cstdint>
#include <string>

#include "format/sealed_format.hpp"
#include "memfd_input.hpp"
#include "paes/error.hpp"
#include "paes/sealed.hpp"

namespace {

constexpr std::uint8_t kKey[32] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
                                   16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
constexpr std::uint32_t kTinkSegmentLens[] = {41, 57, 64, 100, 256, 1024, 4096, 1u << 20};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t variant = data[0];

  paes::SealedSpec spec;
  spec.direction = paes::Direction::decrypt;
  spec.format = (variant & 1) != 0 ? paes::SealedFormat::tink : paes::SealedFormat::paes;
  std::size_t key_len = (variant & 2) != 0 && spec.format == paes::SealedFormat::tink ? 16 : 32;
  if (spec.format == paes::SealedFormat::paes && size - 1 > 6 && data[1 + 6] == 16) key_len = 16;
  spec.key = paes::SecretBytes(kKey, key_len);
  if ((variant & 4) != 0) spec.aad = {'f', 'u', 'z', 'z'};
  // Version-1 files (the committed corpus holds many) don't commit to their
  // key; their segments go through the same decoder, which is what is fuzzed.
  spec.allow_uncommitted = true;
  spec.segment_len = kTinkSegmentLens[(variant >> 3) % std::size(kTinkSegmentLens)];

  paes::TransformOptions options;
  options.engine = paes::EngineKind::serial;
  options.force = true;
  try {
    const std::string input = paes::fuzz::memfd_input("fuzz_segment_decoder", data + 1, size - 1);
    paes::run_sealed(spec, input, "/dev/null", options);
  } catch (const paes::Error&) {
  }
  return 0;
}
