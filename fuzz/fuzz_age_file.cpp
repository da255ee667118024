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
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

#include "paes/error.hpp"
#include "paes/sealed.hpp"

namespace {

// The X25519 secret of the seeds' recipient: bytes 32 to 63.
constexpr std::uint8_t kIdentity[32] = {32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
                                        48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63};

int input_fd() {
  static const int fd = [] {
    const int created = memfd_create("fuzz_age_file", 0);
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
  paes::SealedSpec spec;
  spec.direction = paes::Direction::decrypt;
  spec.format = paes::SealedFormat::age;
  spec.identities.emplace_back(paes::SecretBytes(kIdentity, sizeof kIdentity));
  try {
    if ((variant & 1) != 0) {
      paes::open_age_bytes(spec, std::span(data + 1, size - 1), "fuzz");
    } else {
      replace_input(data + 1, size - 1);
      paes::TransformOptions options;
      options.engine = paes::EngineKind::serial;
      options.force = true;
      paes::run_sealed(spec, "/proc/self/fd/" + std::to_string(input_fd()), "/dev/null", options);
    }
  } catch (const paes::Error&) {
  }
  return 0;
}
