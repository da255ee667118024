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
#include "cipher/oneshot.hpp"
#include "paes/engine.hpp"
#include "paes/error.hpp"
#include "paes/io.hpp"
#include "paes/plan.hpp"
#include "support/host_device.hpp"
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
  // The lengths above are all under 1 MiB, so they run on one worker: a job
  // runs one per MiB of input. Each mode again on three workers at once,
  // each with a lane of its own, from chunk starts all over the message.
  for (const DeviceCase& c : kDeviceCases) {
    const std::size_t len = (std::size_t{3} << 20) + (c.mode == Mode::ecb || c.mode == Mode::cbc ? 0 : 7);
    const CipherSpec spec = test::make_spec(c.mode, c.direction, 128, 5, false);
    const std::vector<std::uint8_t> in = test::random_bytes(len, 11);
    const std::uint64_t chunk = 2 * kBatch + 32;
    ASSERT_EQ(make_engine(EngineKind::threads, 3)->workers_for(ChunkPlan(spec, chunk, *backend), len), 3u);
    EXPECT_EQ(run_in_memory(*backend, spec, in, chunk, 3), openssl_oneshot(spec, in))
        << mode_name(c.mode) << " " << direction_name(c.direction) << " on three workers";
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
// pinned, chunks go through the lane's buffer; pinned, straight again. Two
// workers (2 MiB: a job runs one worker per MiB of input), so the engine's
// parallel file path runs, each worker with a buffer of its own.
TEST(GpuBackend, ChunksInPageLockedMemoryGoToTheDeviceWithNoCopy) {
  const auto backend = host_backend();
  const CipherSpec spec = test::make_spec(Mode::ctr, Direction::encrypt, 128, 5, false);
  const std::vector<std::uint8_t> in = test::random_bytes((std::size_t{2} << 20) + 5, 6);
  const std::vector<std::uint8_t> expected = openssl_oneshot(spec, in);
  ASSERT_EQ(make_engine(EngineKind::threads, 2)->workers_for(ChunkPlan(spec, kBatch, *backend), in.size()), 2u);

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

// The host device, counting the lanes opened on it.
class CountingDevice final : public gpu::Device {
 public:
  explicit CountingDevice(std::unique_ptr<gpu::Device> inner) : inner_(std::move(inner)) {}
  std::string label() const override { return inner_->label(); }
  std::size_t max_batch_bytes() const override { return inner_->max_batch_bytes(); }
  std::unique_ptr<gpu::Lane> open_lane(std::size_t batch_bytes, bool profile) override {
    ++opened_;
    return inner_->open_lane(batch_bytes, profile);
  }
  void* allocate_pinned(std::size_t bytes) override { return inner_->allocate_pinned(bytes); }
  void free_pinned(void* data) noexcept override { inner_->free_pinned(data); }
  bool pin_host(const void* data, std::size_t len) override { return inner_->pin_host(data, len); }
  void unpin_host(const void* data) noexcept override { inner_->unpin_host(data); }
  gpu::LinkRates measure_link(std::size_t bytes, unsigned repeats) override {
    return inner_->measure_link(bytes, repeats);
  }
  double kernel_seconds(const gpu::Launch& launch, const gpu::RoundKeys& keys, unsigned repeats) override {
    return inner_->kernel_seconds(launch, keys, repeats);
  }
  // Shared with the test: the backend owns the device.
  std::shared_ptr<std::atomic<unsigned>> opened() const { return opened_ptr_; }

 private:
  std::unique_ptr<gpu::Device> inner_;
  std::shared_ptr<std::atomic<unsigned>> opened_ptr_ = std::make_shared<std::atomic<unsigned>>(0);
  std::atomic<unsigned>& opened_ = *opened_ptr_;
};

// Lanes are opened once and reused: a job of three workers (3 MiB: the
// engine runs one worker per MiB of input, so a smaller job would run on one
// and need one lane) holds three lanes at once, the self-test's among them,
// and another such job takes the same three, opening none.
TEST(GpuBackend, LanesAreOpenedOnceAndReused) {
  auto device = std::make_unique<CountingDevice>(gpu::open_host_device());
  const std::shared_ptr<std::atomic<unsigned>> opened = device->opened();
  const GpuCipherBackend backend("host", std::move(device), kBatch);
  ASSERT_EQ(opened->load(), 1u) << "the self-test opens one lane";
  const CipherSpec spec = test::make_spec(Mode::ecb, Direction::encrypt, 128, 8, false);
  const std::vector<std::uint8_t> in = test::random_bytes(std::size_t{3} << 20, 8);
  const std::vector<std::uint8_t> expected = openssl_oneshot(spec, in);
  ASSERT_EQ(make_engine(EngineKind::threads, 3)->workers_for(ChunkPlan(spec, 64 * 1024, backend), in.size()), 3u);
  EXPECT_EQ(run_in_memory(backend, spec, in, 64 * 1024, 3), expected);
  EXPECT_EQ(opened->load(), 3u) << "three workers held three lanes at once";
  EXPECT_EQ(run_in_memory(backend, spec, in, 64 * 1024, 3), expected);
  EXPECT_EQ(opened->load(), 3u) << "a lane was opened again";
  // The three are in the pool: a fourth taken is a new one.
  std::vector<std::unique_ptr<gpu::Lane>> taken;
  for (int i = 0; i < 3; ++i) taken.push_back(backend.take_lane());
  EXPECT_EQ(opened->load(), 3u);
  taken.push_back(backend.take_lane());
  EXPECT_EQ(opened->load(), 4u);
  for (auto& lane : taken) backend.return_lane(std::move(lane));
}

// A device that computes wrongly: the self-test refuses it before any job,
// and one that goes wrong later is caught by the per-batch check.
TEST(GpuBackend, ADeviceThatComputesWronglyIsCaught) {
  gpu::HostDeviceOptions always;
  always.after_kernel = [](std::uint8_t* out, std::size_t n) {
    if (n != 0) out[n / 2] ^= 1;
  };
  EXPECT_THROW(host_backend(always), gpu::WrongGpuOutput);

  // Armed once the self-test passed: the job's sixth batch goes wrong, in
  // its first block. The job (160 KiB) runs on one worker, in order, in
  // chunks of four batches: the sixth is the second batch of chunk 1, so the
  // check must run on every batch of a chunk, not on its first alone.
  auto armed = std::make_shared<std::atomic<bool>>(false);
  auto batches = std::make_shared<std::atomic<int>>(0);
  gpu::HostDeviceOptions later;
  later.after_kernel = [armed, batches](std::uint8_t* out, std::size_t n) {
    if (armed->load() && batches->fetch_add(1) == 5 && n != 0) out[0] ^= 0x80;
  };
  const auto backend = host_backend(later);
  armed->store(true);
  const CipherSpec spec = test::make_spec(Mode::ctr, Direction::encrypt, 128, 10, false);
  const std::vector<std::uint8_t> in = test::random_bytes(40 * kBatch, 10);
  EXPECT_THROW(run_in_memory(*backend, spec, in, 4 * kBatch, 1), gpu::WrongGpuOutput);
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
