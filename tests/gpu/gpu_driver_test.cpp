// The GPU driver (engine/gpu/gpu_driver.hpp) against OpenSSL, one typed suite
// run on every device adapter this build has: the host adapter always (so
// CI, ASan and TSan run the driver's batching, chaining, padding, checks and
// pipeline threads without a GPU), OpenCL on whatever device the ICD loader
// offers (PoCL's CPU device in CI), CUDA on a real GPU. Every supported mode,
// direction and key size; sizes from 0 up to many batches, so every lane of
// the ring turns over several times; pieces and chunks that start
// mid-message; CTR counters that wrap at 32, 64 and 128 bits; whole messages
// from sources and into sinks with and without memory views (the file
// path). An adapter without a device skips, saying why.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cipher/oneshot.hpp"
#include "engine/gpu/host_engine.hpp"
#include "paes/error.hpp"
#include "paes/plan.hpp"
#include "test_support.hpp"
#include "util/elapsed.hpp"
#ifdef PAES_HAVE_OPENCL
#include "engine/gpu/opencl_engine.hpp"
#endif
#ifdef PAES_HAVE_CUDA
#include "engine/gpu/cuda_engine.hpp"
#endif

namespace paes {
namespace {

using test::make_spec;
using test::random_bytes;

// Each adapter: why it can't run here (empty when it can), and its engines.
// `small` has 4 KiB batches and the fewest lanes, so a few MiB make hundreds
// of batches and every chaining rule between them runs; `standard` has the
// defaults.
struct HostAdapter {
  static constexpr const char* kName = "host";
  static std::string skip_reason() { return {}; }
  static std::unique_ptr<GpuDriver> make(bool small, bool profile) {
    HostGpuOptions options;
    options.profile = profile;
    if (small) {
      options.batch_bytes = 4096;
      options.lanes = 3;
    }
    return std::make_unique<HostGpuEngine>(options);
  }
};

#ifdef PAES_HAVE_OPENCL
struct OpenClAdapter {
  static constexpr const char* kName = "opencl";
  static std::string skip_reason() {
    return list_opencl_devices().empty()
               ? "no OpenCL device found (no ICD platform with a device; install pocl-opencl-icd for a CPU device)"
               : "";
  }
  static std::unique_ptr<GpuDriver> make(bool small, bool profile) {
    OpenClOptions options;
    options.profile = profile;
    if (small) {
      options.batch_bytes = 4096;
      options.lanes = 3;
      options.blocks_per_item = 3;
      options.local_size = 16;
    }
    return std::make_unique<OpenClEngine>(options);
  }
};
#endif

#ifdef PAES_HAVE_CUDA
struct CudaAdapter {
  static constexpr const char* kName = "cuda";
  static std::string skip_reason() {
    if (!list_cuda_devices().empty()) return {};
    try {
      CudaEngine engine;
    } catch (const Error& e) {
      return e.what();  // what `paes --engine cuda` says on such a machine
    }
    return "CUDA: no CUDA device found";
  }
  static std::unique_ptr<GpuDriver> make(bool small, bool profile) {
    CudaOptions options;
    options.profile = profile;
    if (small) {
      options.batch_bytes = 4096;
      options.lanes = 3;
      options.blocks_per_thread = 3;
      options.threads_per_block = 32;
    }
    return std::make_unique<CudaEngine>(options);
  }
};
#endif

// Engines shared by a suite: building an OpenCL program costs PoCL a second
// or two.
template <class Adapter>
struct Engines {
  std::string skip_reason = Adapter::skip_reason();
  std::unique_ptr<GpuDriver> standard = skip_reason.empty() ? Adapter::make(false, false) : nullptr;
  std::unique_ptr<GpuDriver> small = skip_reason.empty() ? Adapter::make(true, false) : nullptr;
};

template <class Adapter>
class GpuDriverTest : public testing::Test {
 protected:
  static Engines<Adapter>& engines() {
    static Engines<Adapter> e;
    return e;
  }
  void SetUp() override {
    if (!engines().skip_reason.empty()) GTEST_SKIP() << engines().skip_reason;
  }
  GpuDriver& standard() { return *engines().standard; }
  GpuDriver& small() { return *engines().small; }
};

using Adapters = testing::Types<HostAdapter
#ifdef PAES_HAVE_OPENCL
                                ,
                                OpenClAdapter
#endif
#ifdef PAES_HAVE_CUDA
                                ,
                                CudaAdapter
#endif
                                >;
struct AdapterNames {
  template <class Adapter>
  static std::string GetName(int) {
    return Adapter::kName;
  }
};
TYPED_TEST_SUITE(GpuDriverTest, Adapters, AdapterNames);

CipherSpec with_direction(const CipherSpec& spec, Direction direction) {
  CipherSpec other;
  other.mode = spec.mode;
  other.direction = direction;
  other.key = spec.key.clone();
  other.iv = spec.iv;
  other.padding = spec.padding;
  return other;
}

std::string describe(const CipherSpec& spec, std::size_t len) {
  return std::string(mode_name(spec.mode)) + "-" + std::to_string(spec.key_bits()) + " " +
         std::string(direction_name(spec.direction)) + (spec.padded() ? "" : " nopad") + " " +
         std::to_string(len) + " bytes";
}

// What OpenSSL gives for `spec` over `in`, or nothing when it refuses.
std::optional<std::vector<std::uint8_t>> openssl_result(const CipherSpec& spec, const std::vector<std::uint8_t>& in) {
  try {
    return openssl_oneshot(spec, in);
  } catch (const Error&) {
    return std::nullopt;
  }
}

// Runs `spec` over `in` on the driver and through OpenSSL: both must throw,
// or both must give the same bytes.
void expect_same_as_openssl(GpuDriver& engine, const CipherSpec& spec, const std::vector<std::uint8_t>& in) {
  SCOPED_TRACE(describe(spec, in.size()));
  const auto expected = openssl_result(spec, in);
  std::vector<std::uint8_t> got(in.size() + kBlockLen);
  if (!expected) {
    EXPECT_THROW(engine.transform(spec, got.data(), in.data(), in.size()), Error);
    return;
  }
  got.resize(engine.transform(spec, got.data(), in.data(), in.size()));
  ASSERT_EQ(got.size(), expected->size());
  EXPECT_TRUE(got == *expected) << "output differs from OpenSSL";
}

struct ModeDir {
  Mode mode;
  Direction direction;
};
constexpr ModeDir kSupported[] = {
    {Mode::ecb, Direction::encrypt}, {Mode::ecb, Direction::decrypt}, {Mode::ctr, Direction::encrypt},
    {Mode::ctr, Direction::decrypt}, {Mode::cbc, Direction::decrypt}, {Mode::cfb128, Direction::decrypt},
};
constexpr unsigned kKeyBits[] = {128, 192, 256};
// Up to 3 MiB: with 4 KiB batches, hundreds of batches, every lane many times.
constexpr std::size_t kSizes[] = {0, 1, 15, 16, 17, 4096 - 1, 4096 + 5, 3 * 4096 + 16, (3u << 20) + 7};

// Input for a decryption test: for padded modes, a valid ciphertext of a
// plaintext of `len` bytes (so the padding check passes); otherwise `len`
// random bytes.
std::vector<std::uint8_t> input_for(const CipherSpec& spec, std::size_t len, std::uint32_t seed) {
  auto data = random_bytes(len, seed);
  if (spec.direction == Direction::decrypt && spec.padded()) {
    return openssl_oneshot(with_direction(spec, Direction::encrypt), data);
  }
  return data;
}

TYPED_TEST(GpuDriverTest, EveryModeDirectionKeyAndSizeMatchesOpenSsl) {
  std::uint32_t seed = 1;
  for (const ModeDir& md : kSupported) {
    for (unsigned bits : kKeyBits) {
      for (bool padding : {true, false}) {
        if (!padding && md.mode != Mode::ecb && md.mode != Mode::cbc) continue;
        const CipherSpec spec = make_spec(md.mode, md.direction, bits, seed++, padding);
        for (std::size_t len : kSizes) {
          const auto in = input_for(spec, len, seed++);
          expect_same_as_openssl(this->standard(), spec, in);
          expect_same_as_openssl(this->small(), spec, in);
        }
      }
    }
  }
}

TYPED_TEST(GpuDriverTest, ManyBatchesTurnEveryLaneOver) {
  const CipherSpec spec = make_spec(Mode::ctr, Direction::encrypt, 128, 3);
  const auto in = random_bytes(100 * 4096 + 9, 4);
  this->small().reset_stats();
  expect_same_as_openssl(this->small(), spec, in);
  EXPECT_EQ(this->small().stats().batches, 101u);
  EXPECT_GE(this->small().lanes(), 3u);
  EXPECT_EQ(this->small().batch_bytes(), 4096u);
}

TYPED_TEST(GpuDriverTest, BadPaddedInputsFailLikeOpenSsl) {
  for (Mode mode : {Mode::ecb, Mode::cbc}) {
    const CipherSpec spec = make_spec(mode, Direction::decrypt, 128, 7);
    // Empty, not whole blocks, and whole blocks that decrypt to bad padding
    // (in one batch, and at the end of many).
    for (std::size_t len : {0u, 17u, 32u, 4096u, 5u * 4096u}) {
      expect_same_as_openssl(this->standard(), spec, random_bytes(len, 99));
      expect_same_as_openssl(this->small(), spec, random_bytes(len, 99));
    }
    // --no-pad takes whole blocks only, both ways.
    for (Direction d : {Direction::encrypt, Direction::decrypt}) {
      if (mode == Mode::cbc && d == Direction::encrypt) continue;
      const CipherSpec nopad = make_spec(mode, d, 256, 8, false);
      expect_same_as_openssl(this->small(), nopad, random_bytes(33, 5));
    }
  }
}

TYPED_TEST(GpuDriverTest, CtrCounterWrapsAt32And64And128Bits) {
  for (std::size_t ones : {4u, 8u, 16u}) {
    for (unsigned bits : kKeyBits) {
      CipherSpec spec = make_spec(Mode::ctr, Direction::encrypt, bits, 40 + static_cast<std::uint32_t>(ones));
      // The counter's last `ones` bytes are ff, less a few blocks, so the
      // carry happens inside the message and (with 4 KiB batches) inside and
      // across batches.
      for (std::size_t i = kBlockLen - ones; i < kBlockLen; ++i) spec.iv[i] = 0xff;
      spec.iv[kBlockLen - 1] = 0xfd;
      for (std::size_t len : {std::size_t{64}, std::size_t{4096 * 3 + 9}}) {
        const auto in = random_bytes(len, 3);
        expect_same_as_openssl(this->standard(), spec, in);
        expect_same_as_openssl(this->small(), spec, in);
        expect_same_as_openssl(this->small(), with_direction(spec, Direction::decrypt), in);
      }
    }
  }
}

// A message fed in pieces (whole blocks until the final one), in place, must
// equal the one-shot result: the driver carries the CTR block index and the
// CBC/CFB chaining block from piece to piece.
TYPED_TEST(GpuDriverTest, PiecesInPlaceEqualOneShot) {
  const std::size_t len = 70000 + 9;
  std::uint32_t seed = 500;
  for (const ModeDir& md : kSupported) {
    for (unsigned bits : kKeyBits) {
      const CipherSpec spec = make_spec(md.mode, md.direction, bits, seed++);
      const auto in = input_for(spec, len, seed++);
      SCOPED_TRACE(describe(spec, in.size()));
      const auto expected = openssl_oneshot(spec, in);
      for (GpuDriver* engine : {&this->standard(), &this->small()}) {
        std::vector<std::uint8_t> buf(in.size() + kBlockLen);
        std::copy(in.begin(), in.end(), buf.begin());
        engine->begin(spec, spec.iv);
        std::size_t off = 0;
        std::size_t produced = 0;
        for (std::size_t piece : {16u * 3, 16u * 1000, 16u, 16u * 257}) {
          produced += engine->update(buf.data() + off, buf.data() + off, piece, false);
          off += piece;
        }
        produced += engine->update(buf.data() + off, buf.data() + off, in.size() - off, true);
        buf.resize(produced);
        EXPECT_TRUE(buf == expected);
      }
    }
  }
}

// A chunk that starts mid-message, begun with the state the plan gives it
// (ChunkPlan::start_state), equals that stretch of the one-shot output.
TYPED_TEST(GpuDriverTest, ChunkStartingMidMessage) {
  const std::size_t len = 50000;
  const std::size_t start_block = 1001;
  for (const ModeDir& md : kSupported) {
    if (md.mode == Mode::ecb) continue;
    const CipherSpec spec = make_spec(md.mode, md.direction, 192, 77, false);
    const auto in = random_bytes(len, 78);
    const auto expected = openssl_oneshot(spec, in);
    Block state{};
    if (md.mode == Mode::ctr) {
      state = add_to_counter(spec.iv, start_block);
    } else {
      std::copy_n(in.begin() + (start_block - 1) * kBlockLen, kBlockLen, state.begin());
    }
    const std::size_t off = start_block * kBlockLen;
    std::vector<std::uint8_t> out(len - off);
    this->small().begin(spec, state);
    const std::size_t n = this->small().update(out.data(), in.data() + off, len - off, true);
    ASSERT_EQ(n, len - off);
    EXPECT_TRUE(std::equal(out.begin(), out.end(), expected.begin() + static_cast<std::ptrdiff_t>(off)))
        << describe(spec, len);
  }
}

// The file path: a source without a memory view is read straight into the
// lanes' page-locked buffers, and a sink without one is written from them.
class ReadOnlySource final : public Source {
 public:
  explicit ReadOnlySource(const std::vector<std::uint8_t>& bytes) : bytes_(bytes) {}
  std::uint64_t size() const override { return bytes_.size(); }
  void read_at(std::uint64_t offset, std::span<std::uint8_t> dst) override {
    ASSERT_LE(offset + dst.size(), bytes_.size());
    std::copy_n(bytes_.begin() + static_cast<std::ptrdiff_t>(offset), dst.size(), dst.begin());
  }

 private:
  const std::vector<std::uint8_t>& bytes_;
};
class WriteOnlySink final : public Sink {
 public:
  explicit WriteOnlySink(std::vector<std::uint8_t>& bytes) : bytes_(bytes) {}
  // From several threads at once, as a file's pwrite is.
  void write_at(std::uint64_t offset, std::span<const std::uint8_t> src) override {
    const std::lock_guard lock(mutex_);
    if (bytes_.size() < offset + src.size()) bytes_.resize(offset + src.size());
    std::copy(src.begin(), src.end(), bytes_.begin() + static_cast<std::ptrdiff_t>(offset));
  }

 private:
  std::mutex mutex_;
  std::vector<std::uint8_t>& bytes_;
};

TYPED_TEST(GpuDriverTest, WholeMessagesFromSourcesToSinksMatchOpenSsl) {
  std::uint32_t seed = 700;
  for (const ModeDir& md : kSupported) {
    const CipherSpec spec = make_spec(md.mode, md.direction, 256, seed++);
    for (std::size_t len : {std::size_t{0}, std::size_t{100}, std::size_t{37 * 4096 + 5}}) {
      const auto in = input_for(spec, len, seed++);
      SCOPED_TRACE(describe(spec, in.size()));
      const auto expected = openssl_result(spec, in);
      std::vector<std::uint8_t> reported;
      std::uint64_t progress = 0;
      const auto count = [&](std::uint64_t n) { progress += n; };
      std::vector<std::uint8_t> written;
      ReadOnlySource file_in(in);
      WriteOnlySink file_out(written);
      if (!expected) {
        EXPECT_THROW(this->small().run(spec, file_in, file_out, count), Error);
        continue;
      }
      EXPECT_EQ(this->small().run(spec, file_in, file_out, count), expected->size());
      written.resize(expected->size());  // a sink that was never written to
      EXPECT_TRUE(written == *expected);
      EXPECT_EQ(progress, in.size());
      // And memory to memory, through the views.
      std::vector<std::uint8_t> out(in.size() + kBlockLen);
      MemorySource memory_in(in);
      MemorySink memory_out(out);
      out.resize(this->small().run(spec, memory_in, memory_out, nullptr));
      EXPECT_TRUE(out == *expected);
    }
  }
}

// Every batch of a message many batches long has its output checked on the
// CPU (engine/gpu/gpu_check.hpp), in every mode the device runs, and a right
// device passes every check, at every batch boundary.
// Streams (pipes): batches filled as the input comes, with a byte read ahead
// to find the last; a padded encryption whose input ends at a full batch gets
// its padding block in a batch of its own. Through a real pipe, fed by a
// thread, into a file.
TYPED_TEST(GpuDriverTest, StreamsMatchOpenSsl) {
  const std::string out_path = (std::filesystem::temp_directory_path() /
                                ("paes-gpu-stream-" + std::to_string(::getpid()) + "-" + TypeParam::kName))
                                   .string();
  std::uint32_t seed = 800;
  for (const ModeDir& md : kSupported) {
    for (bool padding : {true, false}) {
      if (!padding && md.mode != Mode::ecb && md.mode != Mode::cbc) continue;
      const CipherSpec spec = make_spec(md.mode, md.direction, 192, seed++, padding);
      for (std::size_t len : {std::size_t{0}, std::size_t{17}, std::size_t{4096}, std::size_t{3 * 4096},
                              std::size_t{3 * 4096 + 5}, std::size_t{40 * 4096 + 16}}) {
        const auto in = input_for(spec, len, seed++);
        SCOPED_TRACE(describe(spec, in.size()));
        const auto expected = openssl_result(spec, in);
        int fds[2];
        ASSERT_EQ(::pipe(fds), 0);
        std::thread feeder([&, fd = fds[1]] {
          sigset_t pipe_signal;  // a reader that stopped early: EPIPE, not the signal
          sigemptyset(&pipe_signal);
          sigaddset(&pipe_signal, SIGPIPE);
          pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
          for (std::size_t at = 0; at < in.size();) {
            const ssize_t n = ::write(fd, in.data() + at, std::min<std::size_t>(in.size() - at, 1000));
            if (n <= 0) break;  // the reader stopped
            at += static_cast<std::size_t>(n);
          }
          ::close(fd);
        });
        const int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        ASSERT_GE(out_fd, 0);
        StreamReader reader(fds[0], "pipe");
        StreamWriter writer(out_fd, "out");
        std::uint64_t progress = 0;
        bool threw = false;
        std::uint64_t written = 0;
        try {
          written = this->small().run_stream(spec, reader, writer, [&](std::uint64_t n) { progress += n; });
        } catch (const Error&) {
          threw = true;
        }
        ::close(fds[0]);  // a feeder still writing gets EPIPE, not a hang
        feeder.join();
        ::close(out_fd);
        ASSERT_EQ(threw, !expected);
        if (!expected) continue;
        EXPECT_EQ(written, expected->size());
        EXPECT_EQ(progress, in.size());
        std::ifstream written_file(out_path, std::ios::binary);
        const std::vector<std::uint8_t> got{std::istreambuf_iterator<char>(written_file), {}};
        EXPECT_TRUE(got == *expected);
      }
    }
  }
  std::filesystem::remove(out_path);
}

// A stream whose length the mode can't take fails with the CPU engines'
// words (check_message_length), naming the stream's length, not its last
// batch's: a truncated file is not a wrong key.
TYPED_TEST(GpuDriverTest, StreamLengthErrorsNameTheStreamsLength) {
  const auto error_of = [&](const CipherSpec& spec, std::size_t len) -> std::string {
    const auto in = random_bytes(len, 77);
    int fds[2];
    if (::pipe(fds) != 0) return "no pipe";
    for (std::size_t at = 0; at < in.size();) {  // fits the pipe's buffer: no feeder thread
      const ssize_t n = ::write(fds[1], in.data() + at, in.size() - at);
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
    ::close(fds[1]);
    const int null_fd = ::open("/dev/null", O_WRONLY);
    StreamReader reader(fds[0], "pipe");
    StreamWriter writer(null_fd, "out");
    std::string what = "no error";
    try {
      this->small().run_stream(spec, reader, writer, nullptr);
    } catch (const Error& e) {
      what = e.what();
    }
    ::close(fds[0]);
    ::close(null_fd);
    return what;
  };
  const std::size_t truncated = 3 * 4096 + 5;  // past three 4 KiB batches
  EXPECT_EQ(error_of(make_spec(Mode::cbc, Direction::decrypt, 128, 30), truncated),
            "ciphertext length 12293 is not a multiple of 16: not cbc ciphertext, or truncated");
  EXPECT_EQ(error_of(make_spec(Mode::ecb, Direction::decrypt, 128, 31, false), truncated),
            "ciphertext length 12293 is not a multiple of 16: not ecb ciphertext, or truncated");
  EXPECT_EQ(error_of(make_spec(Mode::ecb, Direction::encrypt, 128, 32, false), truncated),
            "input length 12293 is not a multiple of 16, which --no-pad requires for ecb");
  EXPECT_EQ(error_of(make_spec(Mode::cbc, Direction::decrypt, 128, 33), 0),
            "bad decrypt: empty input holds no padding block (wrong key or corrupted data)");
}

// More --threads than a batch has 1 MiB parts start no idle copy threads.
TEST(HostGpuEngine, CopyThreadsAreAtMostABatchsParts) {
  HostGpuOptions options;
  options.batch_bytes = std::size_t{4} << 20;
  options.copy_threads = 2048;
  const HostGpuEngine engine(options);
  EXPECT_EQ(engine.copy_threads(), 4u);
}

TYPED_TEST(GpuDriverTest, EveryBatchIsCheckedAgainstOpenSsl) {
  GpuDriver& engine = this->small();
  std::uint32_t seed = 900;
  for (const ModeDir& md : kSupported) {
    seed += 2;
    const CipherSpec spec = make_spec(md.mode, md.direction, 128, seed);
    SCOPED_TRACE(describe(spec, 100003));
    const auto in = input_for(spec, 100003, seed);
    std::vector<std::uint8_t> out(in.size() + kBlockLen);
    engine.reset_stats();
    out.resize(engine.transform(spec, out.data(), in.data(), in.size()));
    EXPECT_TRUE(out == openssl_oneshot(spec, in));
    EXPECT_GT(engine.stats().batches, 20u);
    EXPECT_EQ(engine.stats().checked_batches, engine.stats().batches);
  }
}

// Pieces in memory the caller pinned go straight between it and the device
// (the host adapter pins any memory; OpenCL refuses, and they are staged):
// every mode, out of place and in place, whole and partial last blocks,
// padding added and stripped in the one batch that is still staged. Once
// unpinned, the same memory is staged again.
TYPED_TEST(GpuDriverTest, PinnedCallerMemoryGoesStraightToTheDevice) {
  GpuDriver& engine = this->small();
  std::uint32_t seed = 1300;
  for (const ModeDir& md : kSupported) {
    for (unsigned bits : {128u, 256u}) {
      const CipherSpec spec = make_spec(md.mode, md.direction, bits, seed++);
      for (std::size_t len : {std::size_t{5 * 4096}, std::size_t{7 * 4096 + 9}}) {
        const auto in = input_for(spec, len, seed++);
        SCOPED_TRACE(describe(spec, in.size()));
        const auto expected = openssl_result(spec, in);
        if (!expected) continue;  // no valid ciphertext of that length (padded decryption)
        const std::size_t batches = (in.size() + 4095) / 4096;
        std::vector<std::uint8_t> out(in.size() + kBlockLen);
        std::vector<std::uint8_t> buf(in.size() + kBlockLen);
        std::copy(in.begin(), in.end(), buf.begin());
        {
          const PinnedMemory pinned_in = engine.pin(in.data(), in.size());
          const PinnedMemory pinned_out = engine.pin(out.data(), out.size());
          const PinnedMemory pinned_buf = engine.pin(buf.data(), buf.size());
          const bool pins = pinned_in.pinned();
          EXPECT_EQ(pinned_out.pinned(), pins);
          engine.reset_stats();
          out.resize(engine.transform(spec, out.data(), in.data(), in.size()));
          EXPECT_TRUE(out == *expected) << "out of place";
          // Every batch but a last one holding the padding block, or the
          // padding to strip, goes straight.
          EXPECT_GE(engine.stats().direct_batches, pins ? batches - 1 : 0);
          EXPECT_LE(engine.stats().direct_batches, pins ? batches : 0);
          EXPECT_EQ(engine.stats().checked_batches, engine.stats().batches);
          buf.resize(engine.transform(spec, buf.data(), buf.data(), in.size()));
          EXPECT_TRUE(buf == *expected) << "in place";
        }
        engine.reset_stats();
        std::vector<std::uint8_t> again(in.size() + kBlockLen);
        again.resize(engine.transform(spec, again.data(), in.data(), in.size()));
        EXPECT_TRUE(again == *expected);
        EXPECT_EQ(engine.stats().direct_batches, 0u) << "memory no longer pinned went straight";
      }
    }
  }
}

// A piece goes straight only where its input and its output both lie in one
// pinned range.
TYPED_TEST(GpuDriverTest, OnlyWhollyPinnedPiecesGoStraight) {
  GpuDriver& engine = this->small();
  const CipherSpec spec = make_spec(Mode::ctr, Direction::encrypt, 128, 21);
  const auto in = random_bytes(8 * 4096, 22);
  const auto expected = openssl_oneshot(spec, in);
  std::vector<std::uint8_t> out(in.size());
  const PinnedMemory front = engine.pin(in.data(), in.size() / 2);  // half the input
  const PinnedMemory whole_out = engine.pin(out.data(), out.size());
  if (!front.pinned()) GTEST_SKIP() << "this device pins no caller memory";
  engine.reset_stats();
  engine.transform(spec, out.data(), in.data(), in.size());
  EXPECT_TRUE(out == expected);
  EXPECT_EQ(engine.stats().direct_batches, 0u);
  engine.begin(spec, spec.iv);  // the pinned half alone, then the rest staged
  engine.update(out.data(), in.data(), in.size() / 2, false);
  EXPECT_EQ(engine.stats().direct_batches, 4u);
  engine.update(out.data() + in.size() / 2, in.data() + in.size() / 2, in.size() / 2, true);
  EXPECT_EQ(engine.stats().direct_batches, 4u);
  EXPECT_TRUE(out == expected);
}

// Pins that overlap follow CUDA's rules (the host adapter enforces them: a
// copy spanning registered and unregistered memory fails there): memory
// overlapping an earlier pin in part is refused and staged; a range inside
// one is pinned already and goes straight, until the outer handle goes.
TYPED_TEST(GpuDriverTest, OverlappingPinsAreRefusedAndNestedOnesLastAsLongAsTheirOuter) {
  GpuDriver& engine = this->small();
  const CipherSpec spec = make_spec(Mode::ctr, Direction::encrypt, 128, 31);
  std::vector<std::uint8_t> buf = random_bytes(16 * 4096, 32);
  const auto run_in_place = [&](std::size_t at, std::size_t len) {
    std::vector<std::uint8_t> piece(buf.begin() + static_cast<std::ptrdiff_t>(at),
                                    buf.begin() + static_cast<std::ptrdiff_t>(at + len));
    const auto expected = openssl_oneshot(spec, piece);
    engine.reset_stats();
    engine.transform(spec, buf.data() + at, buf.data() + at, len);
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), buf.begin() + static_cast<std::ptrdiff_t>(at)));
    return engine.stats().direct_batches;
  };
  PinnedMemory outer = engine.pin(buf.data(), 8 * 4096);
  if (!outer.pinned()) GTEST_SKIP() << "this device pins no caller memory";
  // Half inside the outer range, half outside: refused, and staged.
  const PinnedMemory straddling = engine.pin(buf.data() + 4 * 4096, 8 * 4096);
  EXPECT_FALSE(straddling.pinned());
  EXPECT_EQ(run_in_place(4 * 4096, 8 * 4096), 0u);
  // Inside it: pinned already, straight.
  const PinnedMemory inner = engine.pin(buf.data() + 4096, 4 * 4096);
  EXPECT_TRUE(inner.pinned());
  EXPECT_EQ(run_in_place(4096, 4 * 4096), 4u);
  // The outer handle goes: so does the inner range, staged again.
  outer.reset();
  EXPECT_EQ(run_in_place(4096, 4 * 4096), 0u);
  // And the memory can be pinned afresh.
  const PinnedMemory again = engine.pin(buf.data() + 4 * 4096, 8 * 4096);
  EXPECT_TRUE(again.pinned());
  EXPECT_EQ(run_in_place(4 * 4096, 8 * 4096), 8u);
}

// A handle dropped after its driver went does nothing (the driver unpinned
// its memory as it went): no call into a driver that is gone (ASan).
TEST(HostGpuEngine, APinHandleMayOutliveItsDriver) {
  std::vector<std::uint8_t> buffer(1 << 16);
  PinnedMemory handle;
  {
    HostGpuEngine engine;
    handle = engine.pin(buffer.data(), buffer.size());
    ASSERT_TRUE(handle.pinned());
  }
  handle.reset();
  EXPECT_FALSE(handle.pinned());
}

TYPED_TEST(GpuDriverTest, SequentialDirectionsAreRefused) {
  for (Mode mode : {Mode::cbc, Mode::cfb128, Mode::cfb8, Mode::cfb1, Mode::ofb}) {
    const CipherSpec spec = make_spec(mode, Direction::encrypt, 128, 3);
    EXPECT_FALSE(GpuDriver::supports(spec));
    try {
      this->standard().begin(spec, spec.iv);
      ADD_FAILURE() << "begin() accepted " << mode_name(mode) << " encryption";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage);
    }
  }
  EXPECT_FALSE(GpuDriver::supports(make_spec(Mode::ofb, Direction::decrypt, 128, 3)));
  EXPECT_FALSE(GpuDriver::supports(make_spec(Mode::cfb8, Direction::decrypt, 128, 3)));
}

TYPED_TEST(GpuDriverTest, NonFinalPiecesMustBeWholeBlocks) {
  const CipherSpec spec = make_spec(Mode::ctr, Direction::encrypt, 128, 3);
  std::vector<std::uint8_t> buf(64);
  this->standard().begin(spec, spec.iv);
  EXPECT_THROW(this->standard().update(buf.data(), buf.data(), 17, false), Error);
  EXPECT_THROW(this->standard().update(buf.data(), buf.data(), 16, false), Error);  // not begun any more
}

// Two drivers used in turn, each with its own key and message under way.
TYPED_TEST(GpuDriverTest, InterleavedDriversKeepTheirKeys) {
  const CipherSpec a = make_spec(Mode::ctr, Direction::encrypt, 128, 11);
  const CipherSpec b = make_spec(Mode::ecb, Direction::decrypt, 256, 12, false);
  const auto in = random_bytes(64 * 1024, 13);
  std::vector<std::uint8_t> out_a(in.size());
  std::vector<std::uint8_t> out_b(in.size());
  this->standard().begin(a, a.iv);
  this->small().begin(b, b.iv);
  const std::size_t half = in.size() / 2;
  this->standard().update(out_a.data(), in.data(), half, false);
  this->small().update(out_b.data(), in.data(), half, false);
  this->standard().update(out_a.data() + half, in.data() + half, in.size() - half, true);
  this->small().update(out_b.data() + half, in.data() + half, in.size() - half, true);
  EXPECT_TRUE(out_a == openssl_oneshot(a, in));
  EXPECT_TRUE(out_b == openssl_oneshot(b, in));
}

TYPED_TEST(GpuDriverTest, ProfilingFillsStats) {
  const auto engine = TypeParam::make(true, true);
  const CipherSpec spec = make_spec(Mode::ctr, Direction::encrypt, 128, 5);
  const auto in = random_bytes(1 << 18, 6);
  std::vector<std::uint8_t> out(in.size());
  engine->transform(spec, out.data(), in.data(), in.size());
  EXPECT_EQ(engine->stats().bytes, in.size());
  EXPECT_EQ(engine->stats().batches, in.size() / 4096);
  EXPECT_EQ(engine->stats().checked_batches, engine->stats().batches);
  EXPECT_GT(engine->stats().kernel_seconds, 0.0);
  EXPECT_TRUE(out == openssl_oneshot(spec, in));
}

// The host adapter plays a device that computes wrongly in one batch: the
// batch check catches it, in memory and through the pipeline's threads.
TEST(HostGpuEngine, AWrongBatchIsCaught) {
  for (const bool pinned : {false, true}) {
    for (const std::uint64_t bad : {0u, 1u, 17u}) {
      SCOPED_TRACE(pinned ? "pinned caller memory" : "staged");
      HostGpuOptions options;
      options.batch_bytes = 4096;
      // Lanes call the hook from their own threads; the self-test's batches
      // are shorter than 4096 bytes.
      options.after_kernel = [bad, seen = std::make_shared<std::atomic<std::uint64_t>>(0)](
                                 std::uint8_t* out, std::size_t n) {
        if (n == 4096 && seen->fetch_add(1) == bad) out[n - 1] ^= 0x01;  // the last block: always checked
      };
      const CipherSpec spec = make_spec(Mode::ctr, Direction::encrypt, 128, 9);
      const auto in = random_bytes(30 * 4096, 10);
      std::vector<std::uint8_t> out(in.size());
      HostGpuEngine engine(options);
      PinnedMemory pinned_in;
      PinnedMemory pinned_out;
      if (pinned) {
        pinned_in = engine.pin(in.data(), in.size());
        pinned_out = engine.pin(out.data(), out.size());
      }
      try {
        engine.transform(spec, out.data(), in.data(), in.size());
        ADD_FAILURE() << "a wrong batch " << bad << " went unnoticed";
      } catch (const gpu::WrongGpuOutput& e) {
        EXPECT_NE(std::string(e.what()).find("host GPU adapter"), std::string::npos) << e.what();
      }
      EXPECT_EQ(engine.stats().direct_batches > 0, pinned);
      // The driver is usable again afterwards.
      expect_same_as_openssl(engine, spec, in);
    }
  }
}

// A source that fails part way: the error is the source's, every stage
// stops, and the driver runs the next message.
TEST(HostGpuEngine, AFailingSourceStopsThePipeline) {
  // 4 KiB batches, each read whole; and 4 MiB batches, each read in 1 MiB
  // parts on 2 threads, the failing part in a batch's middle.
  for (const std::size_t batch : {std::size_t{4096}, std::size_t{4} << 20}) {
    SCOPED_TRACE(batch);
    class FailingSource final : public Source {
     public:
      explicit FailingSource(std::size_t batch) : batch_(batch) {}
      std::uint64_t size() const override { return 10 * batch_; }
      void read_at(std::uint64_t offset, std::span<std::uint8_t> dst) override {
        if (offset + dst.size() > 5 * batch_ + batch_ / 2) throw Error("the disk went away");
        std::fill(dst.begin(), dst.end(), 0x5a);
      }

     private:
      std::size_t batch_;
    };
    HostGpuOptions options;
    options.batch_bytes = batch;
    options.copy_threads = 2;
    HostGpuEngine engine(options);
    const CipherSpec spec = make_spec(Mode::ecb, Direction::encrypt, 128, 9, false);
    FailingSource in(batch);
    std::vector<std::uint8_t> written;
    WriteOnlySink out(written);
    try {
      engine.run(spec, in, out, nullptr);
      ADD_FAILURE() << "the failing source went unnoticed";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "the disk went away");
    }
    EXPECT_LE(written.size(), 5 * batch) << "a batch after the failure was written";
    expect_same_as_openssl(engine, spec, random_bytes(9 * 4096, 11));
  }
}

// Batches of a file read and written in 1 MiB parts on several threads (a
// machine with 6 CPUs or more does this by default): the same bytes as
// OpenSSL, a padded decryption's last part included.
TEST(HostGpuEngine, FileBatchesSplitOverThreadsMatchOpenSsl) {
  HostGpuOptions options;
  options.batch_bytes = std::size_t{4} << 20;
  options.copy_threads = 3;
  HostGpuEngine engine(options);
  std::uint32_t seed = 1500;
  for (const ModeDir md : {ModeDir{Mode::ctr, Direction::encrypt}, ModeDir{Mode::cbc, Direction::decrypt}}) {
    const CipherSpec spec = make_spec(md.mode, md.direction, 128, seed++);
    const auto in = input_for(spec, (std::size_t{9} << 20) + 5, seed++);
    SCOPED_TRACE(describe(spec, in.size()));
    const auto expected = openssl_oneshot(spec, in);
    std::vector<std::uint8_t> written;
    ReadOnlySource file_in(in);
    WriteOnlySink file_out(written);
    EXPECT_EQ(engine.run(spec, file_in, file_out, nullptr), expected.size());
    written.resize(expected.size());
    EXPECT_TRUE(written == expected);
  }
}

// Each stage's busy time is counted for the run it served (what -v and
// --json show): a stage runs on one thread within the run, so its seconds
// lie between nothing and the run's wall time, and reading and writing
// megabytes take some.
TEST(HostGpuEngine, CountsEachStagesBusyTime) {
  HostGpuOptions options;
  options.batch_bytes = std::size_t{4} << 20;
  HostGpuEngine engine(options);
  const CipherSpec spec = make_spec(Mode::ctr, Direction::encrypt, 128, 1600);
  const auto in = input_for(spec, (std::size_t{9} << 20) + 5, 1601);
  std::vector<std::uint8_t> written;
  ReadOnlySource file_in(in);
  WriteOnlySink file_out(written);
  engine.reset_stats();
  const auto start = std::chrono::steady_clock::now();
  engine.run(spec, file_in, file_out, nullptr);
  const double wall = seconds_since(start);
  const GpuDriver::Stats& stats = engine.stats();
  EXPECT_EQ(stats.batches, 3u);
  EXPECT_GT(stats.fill_seconds, 0.0);
  EXPECT_GE(stats.wait_seconds, 0.0);
  EXPECT_GT(stats.drain_seconds, 0.0);
  for (const double busy : {stats.fill_seconds, stats.wait_seconds, stats.drain_seconds}) EXPECT_LE(busy, wall);
}

// A sink that fails part way through a batch written in parts on several
// threads: its error ends the run.
TEST(HostGpuEngine, AFailingSinkStopsThePipeline) {
  class FailingSink final : public Sink {
   public:
    void write_at(std::uint64_t offset, std::span<const std::uint8_t> src) override {
      if (offset + src.size() > (std::size_t{13} << 20) / 2) throw Error("the disk is full");
    }
  };
  HostGpuOptions options;
  options.batch_bytes = std::size_t{4} << 20;
  options.copy_threads = 3;
  HostGpuEngine engine(options);
  const CipherSpec spec = make_spec(Mode::ctr, Direction::encrypt, 128, 12);
  const auto data = random_bytes(std::size_t{12} << 20, 13);
  MemorySource in(data);
  FailingSink out;
  try {
    engine.run(spec, in, out, nullptr);
    ADD_FAILURE() << "the failing sink went unnoticed";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "the disk is full");
  }
  expect_same_as_openssl(engine, spec, random_bytes(9 * 4096, 11));
}

// --device past the end says which indices there are, in words that fit one
// device as well as several.
TEST(GpuDriver, NoSuchDeviceNamesTheIndicesThereAre) {
  const Error one = no_such_device("OpenCL", 5, 1);
  EXPECT_EQ(one.kind(), ErrorKind::usage);
  EXPECT_EQ(std::string(one.what()), "--device 5: this machine has one OpenCL device, --device 0 (see paes info)");
  EXPECT_EQ(std::string(no_such_device("CUDA", 4, 4).what()),
            "--device 4: this machine has 4 CUDA devices, --device 0 to 3 (see paes info)");
}

}  // namespace
}  // namespace paes
