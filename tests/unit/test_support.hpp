// Helpers shared by the unit tests: deterministic random bytes and specs.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "paes/backend.hpp"
#include "paes/mode.hpp"
#include "paes/plan.hpp"
#include "paes/transform.hpp"

namespace paes::test {

// A parallel job of chunks `stride` bytes apart, each as long as its caller
// says (tests read a byte of each: stride 64 MiB sizes buffers by it without
// allocating them), as many chunks as the input has bytes; workers are the
// test's (make_worker).
class StridedChunksJob : public Job {
 public:
  explicit StridedChunksJob(std::uint64_t stride) : stride_(stride) {}
  bool parallel() const override { return true; }
  std::size_t lookback_len() const override { return 0; }
  std::uint64_t in_offset(std::uint64_t i) const override { return i * stride_; }
  std::uint64_t nominal_in_len(std::uint64_t) const override { return stride_; }
  Chunk chunk(std::uint64_t i, std::uint64_t len, bool last) const override {
    return Chunk{i, in_offset(i), len, in_offset(i), last};
  }
  std::size_t out_capacity(const Chunk& c) const override { return static_cast<std::size_t>(c.in_len); }
  std::uint64_t chunk_count(std::uint64_t len) const override { return len; }
  SecretBytes ticket() const override { return SecretBytes(); }

 private:
  std::uint64_t stride_;
};

// A fixture with a fresh directory of its own, named after the test and this
// process, removed afterwards; and whole-file helpers for what goes in it.
class ScratchDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("paes-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::vector<std::uint8_t> read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  static void write_bytes(const std::string& path, std::span<const std::uint8_t> bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }

  std::filesystem::path dir_;
};

// `len` bytes from `rng`, which a test seeds once and draws many inputs from.
inline std::vector<std::uint8_t> random_bytes(std::size_t len, std::mt19937& rng) {
  std::vector<std::uint8_t> bytes(len);
  for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
  return bytes;
}

inline std::vector<std::uint8_t> random_bytes(std::size_t len, std::uint32_t seed) {
  std::mt19937 rng(seed);
  return random_bytes(len, rng);
}

inline CipherSpec make_spec(Mode mode, Direction direction, unsigned key_bits, std::uint32_t seed,
                            bool padding = true) {
  CipherSpec spec;
  spec.mode = mode;
  spec.direction = direction;
  const auto key = random_bytes(key_bits / 8, seed);
  spec.key = SecretBytes(key.data(), key.size());
  const auto iv = random_bytes(kBlockLen, seed + 1);
  std::copy(iv.begin(), iv.end(), spec.iv.begin());
  spec.padding = padding;
  return spec;
}

// The CPU's cipher backends this build has and this machine runs
// ("ipsec-mb", "openssl"): the tests that run "for each backend" run for
// these. The GPU backends have tests of their own (tests/gpu/), on the host
// adapter and the model device: PoCL, a GPU emulated on 2 cores, would take
// the huge tests hours.
inline std::vector<std::string> available_backends() {
  std::vector<std::string> names;
  for (const CipherBackendInfo& info : cipher_backends_info()) {
    if (!info.gpu && info.available) names.push_back(info.name);
  }
  return names;
}

// Whether `backend` runs this mode's direction itself rather than handing it
// to OpenSSL: only then does a test "for each backend" run it again.
inline bool backend_runs(const std::string& backend, Mode mode, Direction direction) {
  return raw_backend_name(BackendChoice{backend, std::nullopt}, mode, direction) == backend;
}

// The options of a job on backend `name`.
inline TransformOptions on_backend(const std::string& name) {
  TransformOptions options;
  options.backend.name = name;
  return options;
}

// A test name's form of a backend name ("ipsec_mb").
inline std::string backend_test_name(std::string name) {
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

}  // namespace paes::test
