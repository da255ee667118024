// The backend is part of the job (paes/backend.hpp's BackendChoice): two jobs
// of one process, each on its own backend, run at the same time and each
// gives OpenSSL's one-shot bytes on the backend it asked for. With a
// process-wide choice, one of the two would have run on the other's backend.
// The CPU pair runs under TSan too (the threads label); the GPU beside the
// CPU runs outside it, since PoCL's threads are not instrumented.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <string>
#include <thread>
#include <vector>

#include "cipher/backend.hpp"
#include "cipher/oneshot.hpp"
#include "paes/backend.hpp"
#include "paes/transform.hpp"
#include "test_support.hpp"

namespace paes {
namespace {

// Rounds of each job, each round started with the other side's at a barrier.
constexpr int kRounds = 6;
constexpr std::size_t kInputLen = (std::size_t{2} << 20) + 5;

struct Side {
  std::string backend;
  Mode mode;
  Direction direction;
  std::uint32_t seed;
};

// Runs each side's job kRounds times on its own thread (the threads engine,
// 2 workers), both sides starting each round together, and checks every
// output, and that each side's backend made objects (its workers' ciphers).
void run_side_by_side(const Side& a, const Side& b) {
  const CipherBackend* backend_a = find_cipher_backend(a.backend);
  const CipherBackend* backend_b = find_cipher_backend(b.backend);
  ASSERT_NE(backend_a, nullptr);
  ASSERT_NE(backend_b, nullptr);
  const std::uint64_t made_a = backend_a->objects_made();
  const std::uint64_t made_b = backend_b->objects_made();
  std::barrier start_together(2);
  std::atomic<int> mismatches{0};
  auto run = [&](const Side& side) {
    const CipherSpec spec = test::make_spec(side.mode, side.direction, 256, side.seed, false);
    const auto input = test::random_bytes(kInputLen / kBlockLen * kBlockLen, side.seed);
    const auto expected = openssl_oneshot(spec, input);
    TransformOptions options = test::on_backend(side.backend);
    options.engine = EngineKind::threads;
    options.threads = 2;
    options.chunk_len = 64 * 1024;
    for (int round = 0; round < kRounds; ++round) {
      std::vector<std::uint8_t> out(input.size() + kBlockLen);
      start_together.arrive_and_wait();
      out.resize(transform_memory(spec, out, input, options));
      if (out != expected) ++mismatches;
    }
  };
  std::thread other([&] { run(b); });
  run(a);
  other.join();
  EXPECT_EQ(mismatches.load(), 0);
  // Every job's workers made their ciphers on the job's own backend: at least
  // one a round on each side, whichever ran first.
  EXPECT_GE(backend_a->objects_made() - made_a, std::uint64_t{kRounds}) << a.backend;
  EXPECT_GE(backend_b->objects_made() - made_b, std::uint64_t{kRounds}) << b.backend;
}

// The CPU backends that run this work themselves, in the table's order: a
// side's backend must, or its job runs on another row.
std::vector<std::string> cpu_backends_running(Mode mode, Direction direction) {
  std::vector<std::string> names;
  for (const std::string& name : test::available_backends()) {
    if (test::backend_runs(name, mode, direction)) names.push_back(name);
  }
  return names;
}

TEST(TwoBackends, CpuBackendsRunTwoJobsAtOnce) {
  // CTR both sides, then CBC decryption (ipsec-mb runs it; its encryption
  // would go to OpenSSL), each on the first two backends that run it.
  const std::vector<std::string> ctr = cpu_backends_running(Mode::ctr, Direction::encrypt);
  const std::vector<std::string> cbc = cpu_backends_running(Mode::cbc, Direction::decrypt);
  if (ctr.size() < 2 || cbc.size() < 2) {
    GTEST_SKIP() << "one CPU backend here runs CTR and CBC decryption (" << ctr.front()
                 << "): ipsec-mb is not built in or can't run";
  }
  run_side_by_side({ctr[0], Mode::ctr, Direction::encrypt, 1}, {ctr[1], Mode::ctr, Direction::encrypt, 2});
  run_side_by_side({cbc[1], Mode::cbc, Direction::decrypt, 3}, {cbc[0], Mode::cbc, Direction::decrypt, 4});
}

TEST(TwoBackends, GpuBesideCpuRunTwoJobsAtOnce) {
  std::string gpu;
  for (const CipherBackendInfo& info : cipher_backends_info()) {
    if (info.gpu && info.available && gpu.empty()) gpu = info.name;
  }
  if (gpu.empty()) GTEST_SKIP() << "no GPU backend with a device here (the OpenCL one runs on PoCL's CPU device)";
  run_side_by_side({gpu, Mode::ctr, Direction::encrypt, 5}, {"openssl", Mode::ctr, Direction::encrypt, 6});
}

}  // namespace
}  // namespace paes
