// The overlap the engines' own workers give a GPU, proven on the model device
// (tests/support/model_device.hpp): the GPU cipher backend over it, driven
// by the threads engine as a job on a real GPU is. One worker holds one lane
// and runs its chunks one after another, at the rate of the three engines in
// series; three workers keep the slowest engine busy. Simulated figures, so
// they are exact and the same on every run, under ASan and TSan too; the
// bytes must be OpenSSL's.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "cipher/gpu/gpu_backend.hpp"
#include "cipher/oneshot.hpp"
#include "paes/engine.hpp"
#include "paes/io.hpp"
#include "paes/plan.hpp"
#include "support/model_device.hpp"
#include "test_support.hpp"

namespace paes::test {
namespace {

constexpr double kUnit = 1e9;  // rates in 10^9 bytes per simulated second
constexpr std::size_t kChunk = 64 * 1024;
constexpr std::size_t kChunks = 48;

struct ModelRun {
  double seconds = 0;  // simulated
  ModelFigures before;
  ModelFigures after;
  double rate() const { return static_cast<double>(after.bytes - before.bytes) / seconds / kUnit; }
};

// CTR over kChunks chunks of kChunk bytes by the threads engine with
// `workers` on a GPU backend over a model device of these rates; in memory,
// or from file to file (`files`: the chunks then lie in the backend's
// page-locked memory). Checks the bytes against OpenSSL.
ModelRun run_on_model(double upload, double kernel, double download, unsigned workers, bool files) {
  auto device = std::make_unique<ModelDevice>(ModelRates{upload * kUnit, kernel * kUnit, download * kUnit});
  const std::shared_ptr<const ModelClock> clock = device->clock();
  const GpuCipherBackend backend("model", std::move(device), kChunk);
  const CipherSpec spec = make_spec(Mode::ctr, Direction::encrypt, 128, 21, false);
  const std::vector<std::uint8_t> in = random_bytes(kChunks * kChunk, 22);
  const ChunkPlan plan(spec, kChunk, backend);
  const auto engine = make_engine(EngineKind::threads, workers);

  ModelRun run;
  run.before = clock->figures();  // the self-test ran on the clock too
  std::vector<std::uint8_t> out(in.size());
  if (files) {
    const auto dir = std::filesystem::temp_directory_path() / ("paes-model-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "in", std::ios::binary)
        .write(reinterpret_cast<const char*>(in.data()), static_cast<std::streamsize>(in.size()));
    {
      InputFile input((dir / "in").string());
      OutputFile output((dir / "out").string(), {});
      engine->run(plan, input, output);
      output.commit();
    }
    std::ifstream((dir / "out"), std::ios::binary)
        .read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size()));
    std::filesystem::remove_all(dir);
    EXPECT_EQ(backend.stats().direct_batches, kChunks) << "file chunks were staged, not in page-locked memory";
  } else {
    MemorySource source(in);
    MemorySink sink(out);
    engine->run(plan, source, sink);
  }
  run.after = clock->figures();
  run.seconds = run.after.now - run.before.now;
  EXPECT_EQ(out, openssl_oneshot(spec, in));
  EXPECT_EQ(run.after.batches - run.before.batches, kChunks);
  std::printf("model device, up %g kernel %g down %g (10^9 B/s), %u worker(s), %s: %zu chunks of %zu B in %.6g "
              "simulated s = %.4g; busy up %.3g kernel %.3g down %.3g s; most lanes in flight %u, overlapped "
              "uploads %llu\n",
              upload, kernel, download, workers, files ? "file to file" : "in memory", kChunks, kChunk,
              run.seconds, run.rate(), run.after.upload_busy - run.before.upload_busy,
              run.after.kernel_busy - run.before.kernel_busy, run.after.download_busy - run.before.download_busy,
              run.after.max_lanes_in_flight,
              static_cast<unsigned long long>(run.after.overlapped_uploads - run.before.overlapped_uploads));
  return run;
}

struct Rates {
  double upload, kernel, download;
  double series() const { return 1 / (1 / upload + 1 / kernel + 1 / download); }
  double slowest() const { return std::min({upload, kernel, download}); }
};

constexpr Rates kRates[] = {{10, 20, 10}, {12, 40, 6}, {30, 8, 25}};

TEST(ModelEngine, OneWorkerRunsTheThreeEnginesInSeries) {
  for (const Rates& r : kRates) {
    for (const bool files : {false, true}) {
      const ModelRun run = run_on_model(r.upload, r.kernel, r.download, 1, files);
      EXPECT_NEAR(run.rate(), r.series(), 0.01 * r.series());
      EXPECT_EQ(run.after.overlapped_uploads - run.before.overlapped_uploads, 0u);
    }
  }
}

TEST(ModelEngine, ThreeWorkersKeepTheSlowestEngineBusy) {
  for (const Rates& r : kRates) {
    for (const bool files : {false, true}) {
      const ModelRun run = run_on_model(r.upload, r.kernel, r.download, 3, files);
      EXPECT_GE(run.rate(), 0.85 * r.slowest());
      EXPECT_GE(run.after.max_lanes_in_flight, 2u);
      EXPECT_GT(run.after.overlapped_uploads - run.before.overlapped_uploads, 0u)
          << "no upload of one lane ran beside another lane's kernel or download";
    }
  }
}

}  // namespace
}  // namespace paes::test
