// libpaes from outside: seals a file and opens it again (the sealed format,
// paes' default), then encrypts a buffer with raw AES-256-CTR (the bytes
// `openssl enc -aes-256-ctr` gives) and decrypts it back. Exits 1 if either
// round trip does not give back the original bytes.
//
//   seal_file [scratch directory]   (default: the system's temporary directory)
#include <openssl/rand.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include <paes/paes.hpp>

namespace fs = std::filesystem;

namespace {

// Keys and IVs from OpenSSL's CSPRNG (libpaes links OpenSSL for its users).
void random_fill(std::uint8_t* out, std::size_t len) {
  if (RAND_bytes(out, static_cast<int>(len)) != 1) throw paes::Error("no randomness from OpenSSL");
}

paes::SecretBytes random_key(std::size_t len) {
  paes::SecretBytes key(len);
  random_fill(key.data(), key.size());
  return key;
}

std::vector<std::uint8_t> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const fs::path dir = argc > 1 ? fs::path(argv[1]) : fs::temp_directory_path();
    std::vector<std::uint8_t> message(3 << 20);  // 3 MiB: four 1 MiB segments (the first holds less, after the header)
    for (std::size_t i = 0; i < message.size(); ++i) message[i] = static_cast<std::uint8_t>(i * 7);

    // Sealed: a file in, a file out. Nothing appears under the output's name
    // unless the whole job succeeded (and, opening, every segment verified).
    const fs::path plain = dir / "message.bin", sealed = dir / "message.bin.paes",
                   opened = dir / "message.opened";
    write_file(plain, message);
    paes::TransformOptions options;
    options.force = true;  // replace the outputs of an earlier run

    paes::SealedSpec seal;  // AES-256-GCM segments, paes preamble
    seal.key = random_key(32);
    const paes::TransformReport report = paes::run_sealed(seal, plain, sealed, options);

    paes::SealedSpec open;
    open.direction = paes::Direction::decrypt;
    open.key = seal.key.clone();
    paes::run_sealed(open, sealed, opened, options);
    if (read_file(opened) != message) {
      std::fprintf(stderr, "seal_file: the opened file differs from the original\n");
      return 1;
    }
    std::printf("sealed %llu bytes into %llu on %u workers, opened them again\n",
                static_cast<unsigned long long>(report.bytes_in),
                static_cast<unsigned long long>(report.bytes_out), report.workers);

    // Raw CTR, memory to memory. CTR adds no padding: the output is as long
    // as the input (a padded mode needs 16 bytes more room).
    paes::CipherSpec ctr;
    ctr.mode = paes::Mode::ctr;
    ctr.key = random_key(32);
    random_fill(ctr.iv.data(), ctr.iv.size());
    std::vector<std::uint8_t> ciphertext(message.size()), decrypted(message.size());
    paes::transform_memory(ctr, ciphertext, message, options);
    ctr.direction = paes::Direction::decrypt;
    paes::transform_memory(ctr, decrypted, ciphertext, options);
    if (decrypted != message || ciphertext == message) {
      std::fprintf(stderr, "seal_file: the CTR round trip failed\n");
      return 1;
    }
    std::printf("AES-256-CTR: %zu bytes encrypted and decrypted in memory\n", message.size());

    fs::remove(plain);
    fs::remove(sealed);
    fs::remove(opened);
    return 0;
  } catch (const paes::Error& e) {
    std::fprintf(stderr, "seal_file: %s\n", e.what());
    return 1;
  }
}
