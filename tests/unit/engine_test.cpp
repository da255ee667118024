#include <gtest/gtest.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>

#include "api/auto_backend.hpp"
#include "api/gpu_stack.hpp"
#include "api/job_runner.hpp"
#include "format/sealed_format.hpp"
#include "paes/backend.hpp"
#include "paes/engine.hpp"
#include "paes/error.hpp"
#include "paes/io.hpp"
#include "paes/plan.hpp"
#include "test_support.hpp"

namespace paes {
namespace {

// A parallel job of 16 chunks of 1 MiB (enough input for the engines to run
// one worker per MiB, so several at once) of which chunks 5 and 7 are bad;
// chunk 5's worker fails only after chunk 7's has, so the later chunk's
// error comes first in time. Chunk 5 waits for chunk 7 on another worker:
// if the engine ever runs them one after the other, chunk 5 fails with an
// error of its own that the tests' expectations name, instead of waiting.
class TwoBadChunks final : public test::StridedChunksJob {
 public:
  static constexpr std::size_t kChunkLen = std::size_t{1} << 20;
  static constexpr std::size_t kInputLen = 16 * kChunkLen;

  TwoBadChunks() : StridedChunksJob(kChunkLen) {}
  std::uint64_t chunk_count(std::uint64_t len) const override { return (len + kChunkLen - 1) / kChunkLen; }
  std::unique_ptr<ChunkWorker> make_worker() const override;

  mutable std::mutex mutex;
  mutable std::condition_variable changed;
  mutable bool seventh_failed = false;
};

class FailFifthAfterSeventh final : public ChunkWorker {
 public:
  explicit FailFifthAfterSeventh(const TwoBadChunks& job) : job_(job) {}
  std::size_t transform(const Chunk& c, std::uint8_t*, const std::uint8_t*) override {
    if (c.index == 7) {
      {
        const std::lock_guard lock(job_.mutex);
        job_.seventh_failed = true;
      }
      job_.changed.notify_all();
      throw Error("chunk 7 is bad");
    }
    if (c.index == 5) {
      std::unique_lock lock(job_.mutex);
      // The bound only keeps a broken engine from hanging the suite: with
      // its workers, chunk 7 fails within milliseconds.
      if (!job_.changed.wait_for(lock, std::chrono::seconds(30), [&] { return job_.seventh_failed; })) {
        throw Error("chunk 7 never ran while chunk 5 was at work: the job ran on one worker");
      }
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // chunk 7's error is kept by now
      throw Error("chunk 5 is bad");
    }
    return static_cast<std::size_t>(c.in_len);
  }

 private:
  const TwoBadChunks& job_;
};

std::unique_ptr<ChunkWorker> TwoBadChunks::make_worker() const {
  return std::make_unique<FailFifthAfterSeventh>(*this);
}

// Runs a TwoBadChunks job; it must fail with chunk 5's error.
void expect_chunk_5_reported(const std::function<void()>& run_job) {
  try {
    run_job();
    ADD_FAILURE() << "the bad chunks went unnoticed";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "chunk 5 is bad");
  }
}

// A job whose chunks fail on several workers reports its first bad chunk,
// whichever failed first in time: the same error from run to run. (Keeping
// the error that came first in time, FirstError's rule before issue 26,
// reports chunk 7 here.)
TEST(ThreadsEngine, ReportsTheFirstBadChunkNotTheFirstToFail) {
  const TwoBadChunks job;
  std::vector<std::uint8_t> in(TwoBadChunks::kInputLen), out(TwoBadChunks::kInputLen);
  MemorySource source(in);
  MemorySink sink(out);
  const auto engine = make_engine(EngineKind::threads, 4);
  expect_chunk_5_reported([&] { engine->run(job, source, sink); });
}

// The same over a stream, through the ordered pipeline (a bare Tink stream
// with a wrong segment size fails on every segment, and only segment 0's
// failure says why): the worker that lost the race must not name another.
TEST(ThreadsEngine, ReportsTheFirstBadChunkOfAStream) {
  const TwoBadChunks job;
  const int null = ::open("/dev/null", O_WRONLY);
  ASSERT_GE(null, 0);
  int in_pipe[2];
  ASSERT_EQ(::pipe(in_pipe), 0);
  // The pipe holds less than the input: a thread of its own feeds it, and
  // stops at the first write the engine no longer reads (EPIPE, not SIGPIPE:
  // gtest's process ignores nothing, so the signal is blocked in this thread).
  std::thread feeder([fd = in_pipe[1]] {
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
    const std::vector<std::uint8_t> zeros(64 * 1024);
    for (std::size_t sent = 0; sent < TwoBadChunks::kInputLen;) {
      const ssize_t n = ::write(fd, zeros.data(), std::min(zeros.size(), TwoBadChunks::kInputLen - sent));
      if (n <= 0) break;
      sent += static_cast<std::size_t>(n);
    }
    ::close(fd);
  });
  {
    StreamReader reader(in_pipe[0], "the pipe");
    StreamWriter writer(null, "/dev/null");
    const auto engine = make_engine(EngineKind::threads, 4);
    expect_chunk_5_reported([&] { engine->run_stream(job, reader, writer); });
  }
  ::close(in_pipe[0]);  // the feeder's next write fails, if it has one left
  feeder.join();
  ::close(null);
}

// Auto looks for a GPU only for a job a GPU could run and gain from, and
// never where the job's backend was chosen: those jobs start no driver.
TEST(AutoBackend, LooksForAGpuOnlyForLargeParallelRawJobs) {
  const std::uint64_t big = kAutoGpuMinBytes;
  auto why = [](Mode mode, Direction direction, std::optional<std::uint64_t> len) {
    return choose_auto_backend(test::make_spec(mode, direction, 256, 1), len, 2, std::nullopt).why;
  };
  const std::vector<CipherBackendName> names = cipher_backend_names();
  if (std::none_of(names.begin(), names.end(), [](const auto& n) { return n.gpu && n.built_in; })) {
    EXPECT_EQ(why(Mode::ctr, Direction::encrypt, big), "auto chose the CPU: this paes has no GPU backend");
    GTEST_SKIP() << "this build has no GPU backend: the rest is about what auto does with one";
  }
  EXPECT_EQ(why(Mode::ctr, Direction::encrypt, big - 1),
            "auto chose the CPU: a job under 256 MiB never pays for a GPU's start-up");
  EXPECT_EQ(why(Mode::ctr, Direction::encrypt, std::nullopt),
            "auto chose the CPU: a stream's size is unknown, and a GPU pays off only for large jobs");
  EXPECT_EQ(why(Mode::cbc, Direction::encrypt, big),
            "auto chose the CPU: this mode and direction runs on the CPU (sequential, or CFB8/CFB1)");
  EXPECT_EQ(why(Mode::cfb8, Direction::decrypt, big),
            "auto chose the CPU: this mode and direction runs on the CPU (sequential, or CFB8/CFB1)");
  // A backend by name: auto's policy is not asked at all.
  TransformOptions options;
  options.backend = {"openssl", std::nullopt, /*gpu_where_faster=*/true};
  std::string reason;
  EXPECT_EQ(raw_backend_for(test::make_spec(Mode::ctr, Direction::encrypt, 256, 1), options, big, reason).name(),
            "openssl");
  EXPECT_EQ(reason, "");
}

MeasuredRates gpu_rates(double gpu, double cpu, double start_seconds) {
  MeasuredRates r;
  r.gpu = "opencl";
  r.device = "a GPU";
  r.gpu_bytes_per_s = gpu;
  r.cpu_bytes_per_s = cpu;
  r.gpu_start_seconds = start_seconds;
  return r;
}

// The GPU runs a job only where it is predicted faster for its size,
// counting its start-up unless it already runs.
TEST(AutoBackend, AGpuMustBeFasterStartUpIncluded) {
  const std::uint64_t gib = std::uint64_t{1} << 30;
  const MeasuredRates fast = gpu_rates(40e9, 20e9, 0.5);  // saves 1/40 s a GiB, starts in 0.5 s
  EXPECT_FALSE(gpu_predicted_faster(fast, gib, false));
  EXPECT_TRUE(gpu_predicted_faster(fast, gib, true));  // started to be measured: that's paid
  // Even at 20e9 bytes (18.6 GiB): 0.5 + 0.5 s against 1 s.
  EXPECT_FALSE(gpu_predicted_faster(fast, 18 * gib, false));
  EXPECT_TRUE(gpu_predicted_faster(fast, 19 * gib, false));
  EXPECT_FALSE(gpu_predicted_faster(gpu_rates(5e9, 20e9, 0), 100 * gib, false));  // slower at any size
  EXPECT_FALSE(gpu_predicted_faster(gpu_rates(20e9, 20e9, 0), gib, true));        // a tie stays on the CPU
  EXPECT_FALSE(gpu_predicted_faster(MeasuredRates{}, 100 * gib, true));           // no GPU found
}

// The least input kept rates send to the GPU, as `paes info` shows it:
// where gpu_predicted_faster turns, and never below what auto considers.
TEST(AutoBackend, GpuFromBytesIsWhereThePredictionTurns) {
  const MeasuredRates fast = gpu_rates(40e9, 20e9, 0.5);  // break-even at 20e9 bytes
  const std::optional<std::uint64_t> least = gpu_from_bytes(fast);
  ASSERT_TRUE(least.has_value());
  EXPECT_EQ(*least, std::uint64_t{20'000'000'001});
  EXPECT_TRUE(gpu_predicted_faster(fast, *least, false));
  EXPECT_FALSE(gpu_predicted_faster(fast, *least - 1, false));
  EXPECT_EQ(gpu_from_bytes(gpu_rates(40e9, 20e9, 0)), kAutoGpuMinBytes);  // no start-up: from auto's least
  EXPECT_FALSE(gpu_from_bytes(gpu_rates(5e9, 20e9, 0)).has_value());     // slower at any size
  EXPECT_FALSE(gpu_from_bytes(gpu_rates(20e9, 20e9, 0)).has_value());    // a tie stays on the CPU
  EXPECT_FALSE(gpu_from_bytes(MeasuredRates{}).has_value());             // no GPU found
}

// `paes info` lists what auto kept for this machine as it is: not another
// machine's lines in a shared home, nor those of a GPU stack since changed.
TEST(AutoBackend, KeptVerdictsAreThisMachinesAsItIs) {
  const auto dir = std::filesystem::temp_directory_path() / ("paes-kept-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ASSERT_EQ(::setenv("PAES_CACHE_DIR", dir.c_str(), 1), 0);
  const CipherSpec ctr = test::make_spec(Mode::ctr, Direction::encrypt, 128, 1);
  const CipherSpec ecb = test::make_spec(Mode::ecb, Direction::decrypt, 256, 1);
  {
    RateCache cache(RateCache::default_path());
    cache.store(auto_rate_key(ctr, 16, std::nullopt), gpu_rates(40e9, 20e9, 0.5));
    cache.store(auto_rate_key(ecb, 4, 1u), MeasuredRates{});
    cache.store("Another CPU|ipsec-mb|16 threads|gpu stack 0123456789abcdef|ctr encrypt|128", gpu_rates(1, 2, 0));
  }
  EXPECT_EQ(auto_rate_cache_path(), (dir / "auto-rates").string());
  std::vector<AutoVerdict> kept = kept_auto_verdicts();
  ASSERT_EQ(kept.size(), 2u);
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) { return a.job < b.job; });
  const std::string backend(kAutoBackend);
  EXPECT_EQ(kept[0].job, "ctr encrypt AES-128, 16 threads, backend " + backend);
  EXPECT_EQ(kept[0].gpu_backend, "opencl");
  EXPECT_EQ(kept[0].device, "a GPU");
  EXPECT_EQ(kept[0].gpu_from_bytes, std::optional<std::uint64_t>(20'000'000'001));
  EXPECT_EQ(kept[1].job, "ecb decrypt AES-256, 4 threads, backend " + backend + ", device 1");
  EXPECT_EQ(kept[1].gpu_backend, "");
  // Another GPU stack (libraries found elsewhere): nothing kept for it yet.
  const char* library_path = std::getenv("LD_LIBRARY_PATH");
  const std::string saved = library_path != nullptr ? library_path : "";
  ASSERT_EQ(::setenv("LD_LIBRARY_PATH", (dir / "lib").c_str(), 1), 0);
  EXPECT_TRUE(kept_auto_verdicts().empty());
  if (library_path != nullptr) {
    ASSERT_EQ(::setenv("LD_LIBRARY_PATH", saved.c_str(), 1), 0);
  } else {
    ASSERT_EQ(::unsetenv("LD_LIBRARY_PATH"), 0);
  }
  ASSERT_EQ(::unsetenv("PAES_CACHE_DIR"), 0);
  std::filesystem::remove_all(dir);
}

// What auto found survives a run, "no GPU" included, and a damaged cache, or
// one an older paes wrote, is no error.
TEST(AutoBackend, MeasuredRatesAreKept) {
  const auto dir = std::filesystem::temp_directory_path() / ("paes-rates-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "auto-rates";
  {
    RateCache cache(file);
    EXPECT_FALSE(cache.find("ctr").has_value());
    MeasuredRates found = gpu_rates(40e9, 20e9, 0.375);
    found.device = "NVIDIA H100\t80GB";  // a tab would break the line
    cache.store("ctr 128", found);
    cache.store("ecb 256", gpu_rates(5e9, 20e9, 0.25));
    cache.store("cbc 192", MeasuredRates{});
  }
  const RateCache again(file);
  ASSERT_TRUE(again.find("ctr 128").has_value());
  const MeasuredRates ctr = *again.find("ctr 128");
  EXPECT_EQ(ctr.gpu, "opencl");
  EXPECT_EQ(ctr.device, "NVIDIA H100 80GB");
  EXPECT_DOUBLE_EQ(ctr.gpu_bytes_per_s, 40e9);
  EXPECT_DOUBLE_EQ(ctr.cpu_bytes_per_s, 20e9);
  EXPECT_DOUBLE_EQ(ctr.gpu_start_seconds, 0.375);
  EXPECT_DOUBLE_EQ(again.find("ecb 256")->gpu_start_seconds, 0.25);
  ASSERT_TRUE(again.find("cbc 192").has_value());
  RateCache tabbed(file);
  tabbed.store("a\tkey\nwith breaks", gpu_rates(1, 2, 0));  // kept on one line, found by the same key
  EXPECT_TRUE(RateCache(file).find("a\tkey\nwith breaks").has_value());
  EXPECT_FALSE(again.find("cbc 192")->found_gpu());
  {
    std::ofstream junk(file, std::ios::app);
    junk << "half a line\n\tno key opencl 1 2 0 \nnegative\topencl\t-1\t5\t0\tx\n"
         << "older paes\t40e9\t20e9\n"                       // the format before start-up times
         << "no such engine\tthreads\t1\t2\t0\tx\n"           // only GPU backends are measured
         << "none with rates\tnone\t1\t2\t0\t\n"
         << "negative start\topencl\t1\t2\t-1\tx\n";
  }
  const RateCache damaged(file);
  EXPECT_TRUE(damaged.find("ctr 128").has_value());
  for (const char* bad : {"half a line", "negative", "older paes", "no such engine", "none with rates",
                          "negative start"}) {
    EXPECT_FALSE(damaged.find(bad).has_value()) << bad;
  }
  RateCache nowhere(dir / "missing" / "deeper" / "auto-rates");
  EXPECT_EQ(nowhere.store("k", gpu_rates(1, 2, 0)), std::nullopt);  // creates its directory
  EXPECT_TRUE(RateCache(dir / "missing" / "deeper" / "auto-rates").find("k").has_value());
  std::filesystem::remove_all(dir);
}

// Two processes that measured at once both keep their lines: a store adds to
// what the file holds now, not to what it held when its cache was read.
TEST(AutoBackend, StoresAddToWhatOthersStoredMeanwhile) {
  const auto dir = std::filesystem::temp_directory_path() / ("paes-rates-merge-" + std::to_string(::getpid()));
  const auto file = dir / "auto-rates";
  RateCache first(file);
  RateCache second(file);  // read before the first one stored
  EXPECT_EQ(first.store("ctr encrypt", gpu_rates(40e9, 20e9, 0.5)), std::nullopt);
  EXPECT_EQ(second.store("ecb decrypt", MeasuredRates{}), std::nullopt);
  const RateCache both(file);
  EXPECT_TRUE(both.find("ctr encrypt").has_value());
  EXPECT_TRUE(both.find("ecb decrypt").has_value());
  EXPECT_TRUE(second.find("ctr encrypt").has_value());  // the store saw it too
  std::filesystem::remove_all(dir);
}

// A cache that can't be written says why, and still answers for this run.
TEST(AutoBackend, AStoreThatFailsSaysWhy) {
  const auto dir = std::filesystem::temp_directory_path() / ("paes-rates-blocked-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "file") << "a file where the cache's directory should be";
  RateCache blocked(dir / "file" / "auto-rates");
  const std::optional<std::string> why = blocked.store("k", gpu_rates(1, 2, 0));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("can't create"), std::string::npos) << *why;
  EXPECT_TRUE(blocked.find("k").has_value());
  RateCache homeless{std::filesystem::path()};
  EXPECT_NE(homeless.store("k", gpu_rates(1, 2, 0)).value_or("").find("unset"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// A relative XDG_CACHE_HOME is invalid (the XDG base directory rules): the
// cache goes under HOME, not wherever paes runs.
TEST(AutoBackend, ARelativeXdgCacheHomeIsIgnored) {
  const char* old_paes = std::getenv("PAES_CACHE_DIR");
  const char* old_xdg = std::getenv("XDG_CACHE_HOME");
  const char* old_home = std::getenv("HOME");
  const std::string saved_paes = old_paes ? old_paes : "", saved_xdg = old_xdg ? old_xdg : "",
                    saved_home = old_home ? old_home : "";
  ::unsetenv("PAES_CACHE_DIR");
  ::setenv("HOME", "/home/someone", 1);
  ::setenv("XDG_CACHE_HOME", "relative/cache", 1);
  EXPECT_EQ(RateCache::default_path(), std::filesystem::path("/home/someone/.cache/paes/auto-rates"));
  ::setenv("XDG_CACHE_HOME", "/var/cache/someone", 1);
  EXPECT_EQ(RateCache::default_path(), std::filesystem::path("/var/cache/someone/paes/auto-rates"));
  const auto restore = [](const char* name, const char* old, const std::string& saved) {
    if (old != nullptr) {
      ::setenv(name, saved.c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  };
  restore("PAES_CACHE_DIR", old_paes, saved_paes);
  restore("XDG_CACHE_HOME", old_xdg, saved_xdg);
  restore("HOME", old_home, saved_home);
}

bool built_in(const std::string& backend) {
  for (const CipherBackendName& row : cipher_backend_names()) {
    if (row.name == backend) return row.built_in;
  }
  return false;
}

// The fingerprint auto keys its rates by is the same from call to call and
// changes with the drivers installed and the variables that steer them: the
// libraries' search path always, and each GPU API's own facts where the build
// has that API.
TEST(AutoBackend, GpuStackFingerprintFollowsTheDrivers) {
  const std::string base = gpu_stack_fingerprint();
  EXPECT_EQ(base.size(), 16u);
  EXPECT_EQ(gpu_stack_fingerprint(), base);
  const char* library_path = std::getenv("LD_LIBRARY_PATH");
  const std::string saved = library_path != nullptr ? library_path : "";
  ASSERT_EQ(::setenv("LD_LIBRARY_PATH", "/opt/another/lib", 1), 0);
  EXPECT_NE(gpu_stack_fingerprint(), base);
  if (library_path != nullptr) {
    ASSERT_EQ(::setenv("LD_LIBRARY_PATH", saved.c_str(), 1), 0);
  } else {
    ASSERT_EQ(::unsetenv("LD_LIBRARY_PATH"), 0);
  }
  EXPECT_EQ(gpu_stack_fingerprint(), base);

  if (built_in("opencl")) {
    const auto vendors = std::filesystem::temp_directory_path() / ("paes-icd-" + std::to_string(::getpid()));
    std::filesystem::create_directories(vendors);
    ASSERT_EQ(::setenv("OCL_ICD_VENDORS", vendors.c_str(), 1), 0);
    const std::string empty = gpu_stack_fingerprint();
    {
      std::ofstream icd(vendors / "vendor.icd");
      icd << "libvendor-opencl.so.1\n";
    }
    const std::string one = gpu_stack_fingerprint();
    EXPECT_NE(one, empty);
    {
      std::ofstream other(vendors / "README");  // not an ICD: ocl-icd reads *.icd only
      other << "x";
    }
    EXPECT_EQ(gpu_stack_fingerprint(), one);
    {
      std::ofstream icd(vendors / "vendor.icd", std::ios::trunc);
      icd << "libother-opencl.so.1\n";  // the same ICD naming another library
    }
    EXPECT_NE(gpu_stack_fingerprint(), one);
    ASSERT_EQ(::unsetenv("OCL_ICD_VENDORS"), 0);
    std::filesystem::remove_all(vendors);
  }
  if (built_in("cuda")) {
    ASSERT_EQ(::setenv("CUDA_VISIBLE_DEVICES", "1", 1), 0);
    EXPECT_NE(gpu_stack_fingerprint(), base);
    ASSERT_EQ(::unsetenv("CUDA_VISIBLE_DEVICES"), 0);
    EXPECT_EQ(gpu_stack_fingerprint(), base);
  }
}

}  // namespace
}  // namespace paes
