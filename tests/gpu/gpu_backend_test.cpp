// The GPU cipher backend driven by the engines' own workers, on the host
// adapter (the GPU kernel bodies on CPU threads, one per lane): every mode
// and direction a device runs gives OpenSSL's bytes through the threads
// engine over memory, files and streams, at chunk sizes that do and don't
// fill a batch; pieces of any length give OpenSSL's bytes; chunks in the
// backend's page-locked memory go to the device with no staging copy; a
// device that computes wrongly is caught; lanes are opened once and reused.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "cipher/gpu/gpu_backend.hpp"
#include "cipher/gpu/gpu_check.hpp"
#include "cipher/gpu/host_device.hpp"
#include "cipher/oneshot.hpp"
#include "paes/engine.hpp"
#include "paes/error.hpp"
#include "paes/io.hpp"
#include "paes/plan.hpp"
#include "test_support.hpp"

namespace paes {
namespace {

// The host adapter's batches are small: a chunk of a few KiB spans several.
constexpr std::size_t kBatch = 4096;

struct DeviceCase {
  Mode mode;
  Direction direction;
};

constexpr DeviceCase kDeviceCases[] = {
    {Mode::ecb, Direction::encrypt}, {Mode::ecb, Direction::decrypt},    {Mode::ctr, Direction::encrypt},
    {Mode::ctr, Direction::decrypt}, {Mode::cbc, Direction::decrypt},    {Mode::cfb128, Direction::decrypt},
};

std::unique_ptr<GpuCipherBackend> host_backend(gpu::HostDeviceOptions options = {}) {
  return std::make_unique<GpuCipherBackend>("host", gpu::open_host_device(std::move(options)), kBatch);
}

// The threads engine with `threads` workers over memory, chunks of `chunk_len`.
std::vector<std::uint8_t> run_in_memory(const CipherBackend& backend, const CipherSpec& spec,
                                        const std::vector<std::uint8_t>& in, std::uint64_t chunk_len,
                                        unsigned threads) {
  const ChunkPlan plan(spec, chunk_len, backend);
  std::vector<std::uint8_t> out(output_capacity(plan, in.size()));
  MemorySource source(in);
  MemorySink sink(out);
  out.resize(make_engine(EngineKind::threads, threads)->run(plan, source, sink));
  return out;
}

TEST(GpuBackend, EveryDeviceModeGivesOpenSslsBytesThroughTheThreadsEngine) {
  const auto backend = host_backend();
  for (const DeviceCase& c : kDeviceCases) {
    for (const unsigned bits : {128u, 192u, 256u}) {
      const bool whole_blocks = c.mode == Mode::ecb || c.mode == Mode::cbc;
      for (const bool padded : {true, false}) {
        if (!whole_blocks && padded) continue;  // CTR and CFB take no padding
        CipherSpec spec = test::make_spec(c.mode, c.direction, bits, bits + 7, padded);
        // Ciphertext to decrypt is made by OpenSSL from plaintext; lengths
        // around the batch and the chunk, and partial last blocks where the
        // mode allows them.
        for (const std::size_t len : {std::size_t{16}, kBatch - 16, kBatch, 3 * kBatch + 48, 5 * kBatch + 7}) {
          if (whole_blocks && !padded && len % kBlockLen != 0) continue;
          std::vector<std::uint8_t> in = test::random_bytes(len, static_cast<std::uint32_t>(len));
          if (c.direction == Direction::decrypt) {
            CipherSpec enc = test::make_spec(c.mode, Direction::encrypt, bits, bits + 7, padded);
            in = openssl_oneshot(enc, in);
          }
          const std::vector<std::uint8_t> expected = openssl_oneshot(spec, in);
          for (const std::uint64_t chunk : {std::uint64_t{kBatch}, std::uint64_t{2 * kBatch + 32}, std::uint64_t{48}}) {
            for (const unsigned threads : {1u, 3u}) {
              EXPECT_EQ(run_in_memory(*backend, spec, in, chunk, threads), expected)
                  << mode_name(c.mode) << " " << direction_name(c.direction) << " AES-" << bits << " len " << len
                  << " chunk " << chunk << " threads " << threads << (padded ? " padded" : "");
            }
          }
        }
      }
    }
  }
  EXPECT_GT(backend->stats().batches, 0u);
}

// A RawCipher's pieces may be any length (ChunkCipher's callers cut them as
// they like): after a partial block the CPU carries the chunk on.
TEST(GpuBackend, PiecesOfAnyLengthGiveOpenSslsBytes) {
  const auto backend = host_backend();
  for (const Mode mode : {Mode::ctr, Mode::cfb128}) {
    const Direction direction = mode == Mode::ctr ? Direction::encrypt : Direction::decrypt;
    const CipherSpec spec = test::make_spec(mode, direction, 256, 3, false);
    const std::vector<std::uint8_t> in = test::random_bytes(3 * kBatch + 100, 9);
    const std::vector<std::uint8_t> expected = openssl_oneshot(spec, in);
    for (const std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{16}, std::size_t{33}, kBatch + 5}) {
      const std::unique_ptr<RawCipher> cipher = backend->make_raw(spec);
      cipher->begin(spec.iv);
      std::vector<std::uint8_t> out(in.size());
      for (std::size_t at = 0; at < in.size(); at += piece) {
        const std::size_t n = std::min(piece, in.size() - at);
        cipher->update(out.data() + at, in.data() + at, n);
      }
      const auto differs = std::mismatch(out.begin(), out.end(), expected.begin());
      EXPECT_TRUE(differs.first == out.end()) << mode_name(mode) << " pieces of " << piece << ": differs from byte "
                                              << (differs.first - out.begin());
    }
  }
}

// Over files, each worker's chunk buffer is the backend's page-locked
// memory: the device copies straight from and into it. In memory that isn't
// pinned, chunks go through the lane's buffer; pinned, straight again.
TEST(GpuBackend, ChunksInPageLockedMemoryGoToTheDeviceWithNoCopy) {
  const auto backend = host_backend();
  const CipherSpec spec = test::make_spec(Mode::ctr, Direction::encrypt, 128, 5, false);
  const std::vector<std::uint8_t> in = test::random_bytes(16 * kBatch + 5, 6);
  const std::vector<std::uint8_t> expected = openssl_oneshot(spec, in);

  const auto dir = std::filesystem::temp_directory_path() / ("paes-gpu-backend-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  backend->reset_stats();  // the self-test's batches aside
  std::ofstream(dir / "in", std::ios::binary).write(reinterpret_cast<const char*>(in.data()),
                                                    static_cast<std::streamsize>(in.size()));
  {
    const ChunkPlan plan(spec, kBatch, *backend);
    InputFile input((dir / "in").string());
    OutputFile output((dir / "out").string(), {});
    make_engine(EngineKind::threads, 2)->run(plan, input, output);
    output.commit();
  }
  std::ifstream written(dir / "out", std::ios::binary);
  const std::vector<std::uint8_t> out((std::istreambuf_iterator<char>(written)), std::istreambuf_iterator<char>());
  EXPECT_EQ(out, expected);
  const GpuCipherBackend::Stats files = backend->stats();
  EXPECT_EQ(files.direct_batches, files.batches) << "every file chunk was staged";
  std::filesystem::remove_all(dir);

  backend->reset_stats();
  EXPECT_EQ(run_in_memory(*backend, spec, in, kBatch, 2), expected);
  EXPECT_EQ(backend->stats().direct_batches, 0u);

  backend->reset_stats();
  std::vector<std::uint8_t> out_memory(in.size());
  const PinnedMemory pinned_in = backend->pin(in.data(), in.size());
  const PinnedMemory pinned_out = backend->pin(out_memory.data(), out_memory.size());
  ASSERT_TRUE(pinned_in.pinned() && pinned_out.pinned());
  {
    const ChunkPlan plan(spec, kBatch, *backend);
    MemorySource source(in);
    MemorySink sink(out_memory);
    make_engine(EngineKind::threads, 2)->run(plan, source, sink);
  }
  EXPECT_EQ(out_memory, expected);
  // The last chunk's partial block runs on the CPU; every whole batch went straight.
  EXPECT_EQ(backend->stats().direct_batches, backend->stats().batches);
}

// Lanes are opened once and reused: another job takes the same lanes.
TEST(GpuBackend, LanesAreOpenedOnceAndReused) {
  const auto backend = host_backend();
  const CipherSpec spec = test::make_spec(Mode::ecb, Direction::encrypt, 128, 8, false);
  const std::vector<std::uint8_t> in = test::random_bytes(8 * kBatch, 8);
  run_in_memory(*backend, spec, in, kBatch, 3);
  std::vector<std::unique_ptr<gpu::Lane>> taken;
  // Three workers used three lanes (and the self-test's lane is one of them):
  // three can be taken back from the pool without opening a fourth.
  for (int i = 0; i < 3; ++i) taken.push_back(backend->take_lane());
  const std::vector<std::uint8_t*> first{taken[0]->host_buffer(), taken[1]->host_buffer(), taken[2]->host_buffer()};
  for (auto& lane : taken) backend->return_lane(std::move(lane));
  taken.clear();
  run_in_memory(*backend, spec, in, kBatch, 3);
  for (int i = 0; i < 3; ++i) taken.push_back(backend->take_lane());
  for (const auto& lane : taken) {
    EXPECT_NE(std::find(first.begin(), first.end(), lane->host_buffer()), first.end()) << "a lane was opened again";
  }
  for (auto& lane : taken) backend->return_lane(std::move(lane));
}

// A device that computes wrongly: the self-test refuses it before any job,
// and one that goes wrong later is caught by the per-batch check.
TEST(GpuBackend, ADeviceThatComputesWronglyIsCaught) {
  gpu::HostDeviceOptions always;
  always.after_kernel = [](std::uint8_t* out, std::size_t n) {
    if (n != 0) out[n / 2] ^= 1;
  };
  EXPECT_THROW(host_backend(always), gpu::WrongGpuOutput);

  // Armed once the self-test passed: the job's fifth batch goes wrong, in
  // its first block.
  auto armed = std::make_shared<std::atomic<bool>>(false);
  auto batches = std::make_shared<std::atomic<int>>(0);
  gpu::HostDeviceOptions later;
  later.after_kernel = [armed, batches](std::uint8_t* out, std::size_t n) {
    if (armed->load() && batches->fetch_add(1) == 4 && n != 0) out[0] ^= 0x80;
  };
  const auto backend = host_backend(later);
  armed->store(true);
  const CipherSpec spec = test::make_spec(Mode::ctr, Direction::encrypt, 128, 10, false);
  const std::vector<std::uint8_t> in = test::random_bytes(40 * kBatch, 10);
  EXPECT_THROW(run_in_memory(*backend, spec, in, kBatch, 2), gpu::WrongGpuOutput);
}

// The sealed format runs on the CPU's backends whatever the process chose:
// a GPU backend has no AES-GCM.
TEST(GpuBackend, HasNoAeadAndRunsNoSequentialMode) {
  const auto backend = host_backend();
  EXPECT_THROW(backend->make_segment(SecretBytes(32), Direction::encrypt), Error);
  EXPECT_FALSE(backend->runs(Mode::cbc, Direction::encrypt));
  EXPECT_FALSE(backend->runs(Mode::ofb, Direction::decrypt));
  EXPECT_FALSE(backend->runs(Mode::cfb8, Direction::decrypt));
  EXPECT_THROW(backend->make_raw(test::make_spec(Mode::ofb, Direction::encrypt, 128, 1)), Error);
}

}  // namespace
}  // namespace paes
