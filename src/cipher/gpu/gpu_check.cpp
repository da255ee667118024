#include "cipher/gpu/gpu_check.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <utility>
#include <vector>

#include "paes/mode.hpp"
#include "util/hex.hpp"

namespace paes::gpu {

namespace {

// NIST SP 800-38A appendix F (the same records as tests/data/kat/sp800_38a.txt):
// one plaintext, one key per key size, and its ciphertext under each mode.
constexpr const char* kPlaintext =
    "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
    "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710";
constexpr const char* kChainIv = "000102030405060708090a0b0c0d0e0f";  // F.2, F.3
constexpr const char* kCounter = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";  // F.5

struct KeyVectors {
  const char* key;
  const char* ecb;     // F.1.1, F.1.3, F.1.5
  const char* cbc;     // F.2.1, F.2.3, F.2.5
  const char* cfb128;  // F.3.13, F.3.15, F.3.17
  const char* ctr;     // F.5.1, F.5.3, F.5.5
};
constexpr KeyVectors kVectors[] = {
    {"2b7e151628aed2a6abf7158809cf4f3c",
     "3ad77bb40d7a3660a89ecaf32466ef97f5d3d58503b9699de785895a96fdbaaf"
     "43b1cd7f598ece23881b00e3ed0306887b0c785e27e8ad3f8223207104725dd4",
     "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2"
     "73bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7",
     "3b3fd92eb72dad20333449f8e83cfb4ac8a64537a0b3a93fcde3cdad9f1ce58b"
     "26751f67a3cbb140b1808cf187a4f4dfc04b05357c5d1c0eeac4c66f9ff7f2e6",
     "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff"
     "5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee"},
    {"8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
     "bd334f1d6e45f25ff712a214571fa5cc974104846d0ad3ad7734ecb3ecee4eef"
     "ef7afd2270e2e60adce0ba2face6444e9a4b41ba738d6c72fb16691603c18e0e",
     "4f021db243bc633d7178183a9fa071e8b4d9ada9ad7dedf4e5e738763f69145a"
     "571b242012fb7ae07fa9baac3df102e008b0e27988598881d920a9e64f5615cd",
     "cdc80d6fddf18cab34c25909c99a417467ce7f7f81173621961a2b70171d3d7a"
     "2e1e8a1dd59b88b1c8e60fed1efac4c9c05f9f9ca9834fa042ae8fba584b09ff",
     "1abc932417521ca24f2b0459fe7e6e0b090339ec0aa6faefd5ccc2c6f4ce8e94"
     "1e36b26bd1ebc670d1bd1d665620abf74f78a7f6d29809585a97daec58c6b050"},
    {"603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
     "f3eed1bdb5d2a03c064b5a7e3db181f8591ccb10d410ed26dc5ba74a31362870"
     "b6ed21b99ca6f4f9f153e7b1beafed1d23304b7a39f9f3ff067d8d8f9e24ecc7",
     "f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d"
     "39f23369a9d9bacfa530e26304231461b2eb05e2c39be9fcda6c19078c6a9d1b",
     "dc7e84bfda79164b7ecd8486985d386039ffed143b28b1c832113c6331e5407b"
     "df10132415e54b92a13ed0a8267ae2f975a385741ab9cef82031623d55b1e471",
     "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5"
     "2b0930daa23de94ce87017ba2d84988ddfc9c58db67aada613c2dd08457941a6"},
};

// One run per kernel. The stream modes take 61 of the 64 bytes (their output
// is a prefix of the vector's), so the partial last block is tested too.
struct KernelRun {
  Mode mode;
  Direction direction;
  std::size_t len;
};
constexpr KernelRun kKernelRuns[] = {
    {Mode::ecb, Direction::encrypt, 64}, {Mode::ecb, Direction::decrypt, 64},
    {Mode::ctr, Direction::encrypt, 61}, {Mode::cbc, Direction::decrypt, 64},
    {Mode::cfb128, Direction::decrypt, 61},
};

SecretBytes from_hex(const char* hex) { return std::move(*decode_hex(hex)); }

const char* ciphertext(const KeyVectors& v, Mode mode) {
  switch (mode) {
    case Mode::ecb: return v.ecb;
    case Mode::cbc: return v.cbc;
    case Mode::cfb128: return v.cfb128;
    default: return v.ctr;
  }
}

// "CTR encryption", for messages.
std::string mode_and_direction(Mode mode, Direction direction) {
  std::string name(mode_name(mode));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return name + (direction == Direction::encrypt ? " encryption" : " decryption");
}

constexpr const char* kNotTrusted =
    "; nothing it computes can be trusted: check the device and its driver, or run on a CPU backend";

}  // namespace

void run_self_test(const DeviceTransform& transform, const std::string& device) {
  const SecretBytes plaintext = from_hex(kPlaintext);
  for (const KeyVectors& v : kVectors) {
    for (const KernelRun& run : kKernelRuns) {
      CipherSpec spec;
      spec.mode = run.mode;
      spec.direction = run.direction;
      spec.key = from_hex(v.key);
      spec.padding = false;
      const SecretBytes iv = from_hex(run.mode == Mode::ctr ? kCounter : kChainIv);
      std::copy_n(iv.data(), kBlockLen, spec.iv.begin());
      const SecretBytes cipher = from_hex(ciphertext(v, run.mode));
      const bool encrypt = run.direction == Direction::encrypt;
      const std::uint8_t* in = encrypt ? plaintext.data() : cipher.data();
      const std::uint8_t* expected = encrypt ? cipher.data() : plaintext.data();

      std::vector<std::uint8_t> out(run.len + kBlockLen);
      bool right = false;
      try {
        const std::size_t produced = transform(spec, out.data(), in, run.len);
        right = produced == run.len && std::memcmp(out.data(), expected, run.len) == 0;
      } catch (const WrongGpuOutput&) {
        // The backend's batch check saw it first; say that it was the self-test.
      }
      if (!right) {
        throw WrongGpuOutput(device + " failed its AES self-test: the SP 800-38A vector for " +
                             mode_and_direction(run.mode, run.direction) + " with AES-" +
                             std::to_string(spec.key_bits()) + " came out wrong" + kNotTrusted);
      }
    }
  }
}

BatchCheck::BatchCheck(std::string device)
    : device_(std::move(device)), random_(std::random_device{}()) {}

void BatchCheck::begin(const CipherSpec& spec, const Block& start_state) {
  mode_ = spec.mode;
  direction_ = spec.direction;
  counter0_ = start_state;
  // Each sampled block starts from its own state; no padding, because the
  // device's output is compared before padding is stripped above the backend.
  cpu_ = cpu_raw_backend(spec.mode, spec.direction).make_raw(spec);
}

BatchSample BatchCheck::sample(const std::uint8_t* staged, std::size_t n,
                               std::uint64_t first_block, const Block& before) {
  BatchSample s;
  s.first_block = first_block;
  const std::size_t blocks = (n + kBlockLen - 1) / kBlockLen;
  if (blocks == 0) return s;
  const std::size_t random = std::uniform_int_distribution<std::size_t>(0, blocks - 1)(random_);
  for (std::size_t k : {std::size_t{0}, blocks - 1, random}) {
    const std::size_t offset = k * kBlockLen;
    const bool seen = std::any_of(s.blocks.begin(), s.blocks.begin() + static_cast<std::ptrdiff_t>(s.count),
                                  [&](const auto& b) { return b.offset == offset; });
    if (seen) continue;
    BatchSample::SampledBlock& b = s.blocks[s.count++];
    b.offset = offset;
    b.len = std::min(kBlockLen, n - offset);
    std::memcpy(b.in.data(), staged + offset, b.len);
    if (mode_ == Mode::ctr) {
      b.iv = add_to_counter(counter0_, first_block + k);
    } else if (mode_ == Mode::cbc || mode_ == Mode::cfb128) {
      if (k == 0) {
        b.iv = before;
      } else {
        std::memcpy(b.iv.data(), staged + offset - kBlockLen, kBlockLen);
      }
    }
  }
  return s;
}

void BatchCheck::verify(const BatchSample& sample, const std::uint8_t* out) {
  for (std::size_t i = 0; i < sample.count; ++i) {
    const BatchSample::SampledBlock& b = sample.blocks[i];
    cpu_->begin(b.iv);
    Block expected{};
    cpu_->update(expected.data(), b.in.data(), b.len);
    if (std::memcmp(expected.data(), out + b.offset, b.len) != 0) {
      throw WrongGpuOutput(device_ + " gave wrong AES output: block " +
                           std::to_string(sample.first_block + b.offset / kBlockLen) + " (" +
                           mode_and_direction(mode_, direction_) +
                           ") differs from the CPU's (" + cpu_->implementation() + ")" + kNotTrusted);
    }
  }
}

}  // namespace paes::gpu
