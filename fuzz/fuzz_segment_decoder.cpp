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
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "format/sealed_format.hpp"
#include "paes/error.hpp"
#include "paes/sealed.hpp"

namespace {

constexpr std::uint8_t kKey[32] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
                                   16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
constexpr std::uint32_t kTinkSegmentLens[] = {41, 57, 64, 100, 256, 1024, 4096, 1u << 20};

// The sealed input as a file: one memfd, rewritten for every input.
int input_fd() {
  static const int fd = [] {
    const int created = memfd_create("fuzz_segment_decoder", 0);
    if (created < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    return created;
  }();
  return fd;
}

void replace_input(const std::uint8_t* data, std::size_t size) {
  const int fd = input_fd();
  if (ftruncate(fd, 0) != 0 || (size != 0 && pwrite(fd, data, size, 0) != static_cast<ssize_t>(size))) {
    std::perror("memfd write");
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t variant = data[0];
  replace_input(data + 1, size - 1);

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
    paes::run_sealed(spec, "/proc/self/fd/" + std::to_string(input_fd()), "/dev/null", options);
  } catch (const paes::Error&) {
  }
  return 0;
}
