// The model GPU (tests/support/model_device.hpp) on its simulated clock:
// lanes driven from threads as the engines' workers drive them, one lane per
// thread. One lane runs its batches one after another, at the rate of the
// three engines in series; three lanes keep the slowest engine busy, one
// lane's upload running beside another's kernel or download. The figures
// are simulated, so they are exact and the same on every run; the bytes
// are the host kernels' and must be OpenSSL's.
#include "support/model_device.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "cipher/gpu/key_schedule.hpp"
#include "cipher/oneshot.hpp"
#include "paes/error.hpp"
#include "test_support.hpp"

namespace paes::test {
namespace {

// Rates in units of 10^9 bytes per simulated second.
constexpr double kUnit = 1e9;
constexpr std::size_t kChunk = 64 * 1024;
constexpr std::size_t kChunks = 48;

ModelRates rates(double upload, double kernel, double download) {
  return {upload * kUnit, kernel * kUnit, download * kUnit};
}

struct Outcome {
  ModelFigures figures;
  std::vector<std::uint8_t> message;
  std::vector<std::uint8_t> out;
  CipherSpec spec;
  double rate() const { return static_cast<double>(figures.bytes) / figures.now / kUnit; }
};

// AES-CTR of a message cut into chunks of `lens` bytes, chunk j on lane
// j % lanes, each lane on a thread of its own that takes its lane before any
// thread enqueues. `pinned`: in place in device page-locked memory;
// otherwise staged through each lane's buffer.
Outcome run_ctr(const ModelRates& r, unsigned lanes, const std::vector<std::size_t>& lens, bool pinned = false) {
  Outcome run;
  run.spec = make_spec(Mode::ctr, Direction::encrypt, 128, 7);
  const std::size_t total = std::accumulate(lens.begin(), lens.end(), std::size_t{0});
  run.message = random_bytes(total, 8);
  run.out.assign(total, 0);
  std::vector<std::size_t> offsets(lens.size());
  std::exclusive_scan(lens.begin(), lens.end(), offsets.begin(), std::size_t{0});

  ModelDevice device(r);
  const std::shared_ptr<const ModelClock> clock = device.clock();
  auto* block = static_cast<std::uint8_t*>(pinned ? device.allocate_pinned(total) : nullptr);
  if (pinned) std::memcpy(block, run.message.data(), total);
  const std::size_t batch = *std::max_element(lens.begin(), lens.end());
  std::vector<std::unique_ptr<gpu::Lane>> opened;
  for (unsigned i = 0; i < lanes; ++i) opened.push_back(device.open_lane(batch, true));

  const gpu::RoundKeys keys = gpu::expand_encrypt_key(run.spec.key.data(), run.spec.key.size());
  std::barrier all_taken(lanes);
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < lanes; ++i) {
    threads.emplace_back([&, i] {
      gpu::Lane& lane = *opened[i];
      lane.set_keys(keys);
      lane.taken();
      all_taken.arrive_and_wait();
      for (std::size_t j = i; j < lens.size(); j += lanes) {
        gpu::Launch launch;
        launch.kernel = gpu::Kernel::ctr;
        launch.bytes = lens[j];
        launch.first_block = offsets[j] / kBlockLen;
        launch.state = gpu::state_words(run.spec.iv);
        if (pinned) {
          lane.enqueue(launch, block + offsets[j], block + offsets[j]);
          lane.wait();
        } else {
          std::memcpy(lane.host_buffer(), run.message.data() + offsets[j], lens[j]);
          lane.enqueue(launch, lane.host_buffer(), lane.host_buffer());
          lane.wait();
          std::memcpy(run.out.data() + offsets[j], lane.host_buffer(), lens[j]);
        }
      }
      lane.returned();
    });
  }
  for (std::thread& t : threads) t.join();
  opened.clear();
  if (pinned) {
    std::memcpy(run.out.data(), block, total);
    device.free_pinned(block);
  }
  run.figures = clock->figures();
  return run;
}

void report(const std::string& name, unsigned lanes, const ModelRates& r, const Outcome& run, double expected) {
  const ModelFigures& f = run.figures;
  std::cout << name << ": " << lanes << " lane(s), rates up " << r.upload / kUnit << " kernel " << r.kernel / kUnit
            << " down " << r.download / kUnit << ": " << f.batches << " batches, " << f.bytes << " bytes in "
            << f.now << " s simulated = " << run.rate() << " (expected " << expected << "); busy up "
            << f.upload_busy << " kernel " << f.kernel_busy << " down " << f.download_busy
            << " s; most lanes in flight " << f.max_lanes_in_flight << ", overlapped uploads "
            << f.overlapped_uploads << "\n";
  ::testing::Test::RecordProperty(name + "_rate_" + std::to_string(lanes) + "_lanes_" + std::to_string(r.upload / kUnit) +
                                      "_" + std::to_string(r.kernel / kUnit) + "_" + std::to_string(r.download / kUnit),
                                  std::to_string(run.rate()));
}

const ModelRates kRateSets[] = {rates(10, 20, 10), rates(12, 40, 6), rates(30, 8, 25)};

TEST(ModelDevice, OneLaneRunsTheThreeEnginesInSeries) {
  for (const ModelRates& r : kRateSets) {
    const Outcome run = run_ctr(r, 1, std::vector<std::size_t>(kChunks, kChunk));
    const double serial = 1 / (kUnit / r.upload + kUnit / r.kernel + kUnit / r.download);
    report("one_lane", 1, r, run, serial);
    EXPECT_EQ(run.figures.batches, kChunks);
    EXPECT_EQ(run.figures.bytes, kChunks * kChunk);
    EXPECT_NEAR(run.rate(), serial, 0.01 * serial);
    EXPECT_EQ(run.figures.max_lanes_in_flight, 1u);
    EXPECT_EQ(run.figures.overlapped_uploads, 0u);
  }
}

TEST(ModelDevice, ThreeLanesKeepTheSlowestEngineBusy) {
  for (const ModelRates& r : kRateSets) {
    const Outcome run = run_ctr(r, 3, std::vector<std::size_t>(kChunks, kChunk));
    const double slowest = std::min({r.upload, r.kernel, r.download}) / kUnit;
    report("three_lanes", 3, r, run, slowest);
    EXPECT_GE(run.rate(), 0.85 * slowest);
    // No schedule beats its slowest engine.
    EXPECT_LE(run.rate(), slowest * (1 + 1e-9));
    EXPECT_GE(run.figures.max_lanes_in_flight, 2u);
    EXPECT_GT(run.figures.overlapped_uploads, 0u);
    // Each engine was busy exactly for its bytes at its rate.
    const auto bytes = static_cast<double>(run.figures.bytes);
    EXPECT_NEAR(run.figures.upload_busy, bytes / r.upload, 1e-9 * bytes / r.upload);
    EXPECT_NEAR(run.figures.kernel_busy, bytes / r.kernel, 1e-9 * bytes / r.kernel);
    EXPECT_NEAR(run.figures.download_busy, bytes / r.download, 1e-9 * bytes / r.download);
  }
}

// Chunks of different lengths, the last ending mid-block: which batch takes
// an engine first decides the figures, so this checks the tie order.
std::vector<std::size_t> uneven_chunks() {
  std::vector<std::size_t> lens;
  for (std::size_t j = 0; j < 40; ++j) lens.push_back((j * 7 % 5 + 1) * 16 * 1024 + (j % 3) * kBlockLen);
  lens.push_back(1000);
  return lens;
}

TEST(ModelDevice, BytesAreOpenSslsThroughLaneBuffersAndPinnedMemory) {
  for (const bool pinned : {false, true}) {
    const Outcome run = run_ctr(rates(10, 20, 10), 3, uneven_chunks(), pinned);
    EXPECT_EQ(run.out, openssl_oneshot(run.spec, run.message)) << (pinned ? "pinned, in place" : "lane buffers");
  }
}

TEST(ModelDevice, TheSameFiguresOnEveryRun) {
  const Outcome first = run_ctr(rates(12, 40, 6), 3, uneven_chunks());
  report("uneven", 3, rates(12, 40, 6), first, 6);
  for (int again = 0; again < 4; ++again) {
    const ModelFigures f = run_ctr(rates(12, 40, 6), 3, uneven_chunks()).figures;
    EXPECT_EQ(f.now, first.figures.now);
    EXPECT_EQ(f.upload_busy, first.figures.upload_busy);
    EXPECT_EQ(f.kernel_busy, first.figures.kernel_busy);
    EXPECT_EQ(f.download_busy, first.figures.download_busy);
    EXPECT_EQ(f.max_lanes_in_flight, first.figures.max_lanes_in_flight);
    EXPECT_EQ(f.overlapped_uploads, first.figures.overlapped_uploads);
  }
}

// One batch on one lane of its own, staged through its buffer.
gpu::LaneTimes one_batch(gpu::Lane& lane, std::size_t bytes) {
  const CipherSpec spec = make_spec(Mode::ctr, Direction::encrypt, 256, 3);
  lane.set_keys(gpu::expand_encrypt_key(spec.key.data(), spec.key.size()));
  gpu::Launch launch;
  launch.bytes = bytes;
  lane.enqueue(launch, lane.host_buffer(), lane.host_buffer());
  return lane.wait();
}

TEST(ModelDevice, ProfiledLanesSayTheirSimulatedTimes) {
  ModelDevice device(rates(1, 2, 4));
  const auto profiled = device.open_lane(kChunk, true);
  const gpu::LaneTimes t = one_batch(*profiled, kChunk);
  EXPECT_DOUBLE_EQ(t.upload, kChunk / kUnit);
  EXPECT_DOUBLE_EQ(t.kernel, kChunk / kUnit / 2);
  EXPECT_DOUBLE_EQ(t.download, kChunk / kUnit / 4);
  EXPECT_DOUBLE_EQ(device.clock()->now(), t.upload + t.kernel + t.download);
  profiled->returned();
  const auto plain = device.open_lane(kChunk, false);
  const gpu::LaneTimes none = one_batch(*plain, kChunk);
  EXPECT_EQ(none.upload + none.kernel + none.download, 0);
}

// A returned lane doesn't hold the clock: the other runs on. A lane in use
// that never waits does, and the waiting lane's wait says so rather than
// move the clock by itself.
TEST(ModelDevice, OnlyLanesInUseHoldTheClock) {
  ModelDevice device(rates(1, 1, 1), std::chrono::milliseconds(200));
  const auto idle = device.open_lane(kChunk, false);
  const auto busy = device.open_lane(kChunk, false);
  try {
    one_batch(*busy, kChunk);
    FAIL() << "the clock moved while a lane in use never waited";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("1 of the 2 lanes in use never waited"), std::string::npos) << e.what();
  }
  EXPECT_EQ(device.clock()->now(), 0);
  idle->returned();
  EXPECT_EQ(busy->wait().upload, 0);  // not profiled
  EXPECT_DOUBLE_EQ(device.clock()->now(), 3 * kChunk / kUnit);
  idle->taken();
  busy->returned();
  EXPECT_NO_THROW(one_batch(*idle, kChunk));
  EXPECT_DOUBLE_EQ(device.clock()->now(), 6 * kChunk / kUnit);
}

// A lane computing its batch's bytes for longer than the stall limit (8 MiB
// of host AES takes far more than 20 ms, the more so under the sanitizers)
// holds the clock without stalling it.
TEST(ModelDevice, ComputingABatchIsNotAStall) {
  constexpr std::size_t kBig = std::size_t{8} << 20;
  ModelDevice device(rates(1, 1, 1), std::chrono::milliseconds(20));
  const CipherSpec spec = make_spec(Mode::ctr, Direction::encrypt, 128, 9);
  const gpu::RoundKeys keys = gpu::expand_encrypt_key(spec.key.data(), spec.key.size());
  std::vector<std::unique_ptr<gpu::Lane>> lanes;
  for (int i = 0; i < 2; ++i) lanes.push_back(device.open_lane(kBig, false));
  std::vector<std::thread> threads;
  std::vector<int> stalls(2, 0);
  for (std::size_t i = 0; i < 2; ++i) {
    threads.emplace_back([&, i] {
      gpu::Lane& lane = *lanes[i];
      lane.set_keys(keys);
      gpu::Launch launch;
      launch.bytes = kBig;
      for (int batch = 0; batch < 2; ++batch) {
        try {
          lane.enqueue(launch, lane.host_buffer(), lane.host_buffer());
          lane.wait();
        } catch (const Error&) {
          ++stalls[i];
          lane.drain_quietly();
        }
      }
      lane.returned();
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(stalls, std::vector<int>(2, 0));
  // Both start at 0; each engine then runs one batch after another, the
  // second lane a step behind the first: done at 7 batch-steps.
  EXPECT_DOUBLE_EQ(device.clock()->now(), 7 * kBig / kUnit);
}

TEST(ModelDevice, RefusesWhatADeviceWouldNot) {
  EXPECT_THROW(ModelDevice{rates(1, 0, 1)}, Error);
  ModelDevice device(rates(1, 1, 1));
  const auto lane = device.open_lane(kChunk, false);
  EXPECT_THROW(lane->wait(), Error);
  gpu::Launch launch;
  launch.bytes = kBlockLen;
  EXPECT_THROW(lane->enqueue(launch, lane->host_buffer(), lane->host_buffer()), Error);  // no keys
  const CipherSpec spec = make_spec(Mode::ctr, Direction::encrypt, 128, 5);
  lane->set_keys(gpu::expand_encrypt_key(spec.key.data(), spec.key.size()));
  std::vector<std::uint8_t> pageable(kBlockLen);
  EXPECT_THROW(lane->enqueue(launch, pageable.data(), lane->host_buffer()), Error);
  launch.bytes = kChunk + kBlockLen;
  EXPECT_THROW(lane->enqueue(launch, lane->host_buffer(), lane->host_buffer()), Error);
  launch.bytes = kBlockLen;
  lane->enqueue(launch, lane->host_buffer(), lane->host_buffer());
  EXPECT_THROW(lane->enqueue(launch, lane->host_buffer(), lane->host_buffer()), Error);
  lane->drain_quietly();
  EXPECT_THROW(lane->wait(), Error);
}

}  // namespace
}  // namespace paes::test
