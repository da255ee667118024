// The GPU devices' lanes (cipher/gpu/device.hpp) against OpenSSL, on every
// device this build has: the host adapter always, and each GPU API's default
// device (the rows of cipher/backends.cpp: OpenCL where the ICD loader offers
// a device, PoCL's CPU device in CI; CUDA on a real GPU). Three lanes driven from three threads at once, each under keys of its
// own (per-lane keys: a lane that ran under another's keys gives the wrong
// bytes), through every kernel and key size: batches staged in the lane's
// buffer, sent straight from and into the device's page-locked memory, and in
// place; CTR and CFB128 messages end in a partial block, and the CTR counter
// carries past 64 bits. A device that isn't there skips, saying why.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <exception>
#include <functional>
#include <iostream>
#include <latch>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cipher/gpu/device.hpp"
#include "cipher/gpu/gpu_backend.hpp"
#include "cipher/gpu/key_schedule.hpp"
#include "cipher/oneshot.hpp"
#include "paes/error.hpp"
#include "support/host_device.hpp"
#include "test_support.hpp"
#ifdef PAES_HAVE_OPENCL
#include "cipher/opencl/opencl_device.hpp"
#endif
#ifdef PAES_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "cipher/cuda/cuda_device.hpp"
#endif

namespace paes {
namespace {

using gpu::Kernel;

constexpr std::size_t kBatch = 4096;
constexpr unsigned kLanes = 3;

CipherSpec spec_for(Kernel kernel, unsigned key_bits, std::uint32_t seed) {
  switch (kernel) {
    case Kernel::ecb_encrypt: return test::make_spec(Mode::ecb, Direction::encrypt, key_bits, seed, false);
    case Kernel::ecb_decrypt: return test::make_spec(Mode::ecb, Direction::decrypt, key_bits, seed, false);
    case Kernel::cbc_decrypt: return test::make_spec(Mode::cbc, Direction::decrypt, key_bits, seed, false);
    case Kernel::cfb128_decrypt: return test::make_spec(Mode::cfb128, Direction::decrypt, key_bits, seed);
    case Kernel::ctr: break;
  }
  CipherSpec spec = test::make_spec(Mode::ctr, Direction::encrypt, key_bits, seed);
  // The low 64 counter bits wrap in the second batch: the kernel carries into the high ones.
  std::fill(spec.iv.begin() + 8, spec.iv.end(), std::uint8_t{0xff});
  spec.iv[14] = 0xfe;
  spec.iv[15] = 0x80;
  return spec;
}

// How one batch of a message travels.
enum class Path { staged, direct, in_place };

// Runs the message `in` of `spec` through `lane` in batches of kBatch, each
// batch on its own path in turn (direct and in place only with `pinned`: the
// device's page-locked memory, twice the message long), and returns the result.
std::vector<std::uint8_t> run_message(gpu::Lane& lane, const CipherSpec& spec, Kernel kernel,
                                      const std::vector<std::uint8_t>& in, std::uint8_t* pinned) {
  lane.set_keys(gpu::uses_decrypt_keys(kernel) ? gpu::expand_decrypt_key(spec.key.data(), spec.key.size())
                                               : gpu::expand_encrypt_key(spec.key.data(), spec.key.size()));
  std::vector<std::uint8_t> out(in.size());
  std::uint8_t* pinned_in = pinned;
  std::uint8_t* pinned_out = pinned == nullptr ? nullptr : pinned + in.size();
  if (pinned != nullptr) std::memcpy(pinned_in, in.data(), in.size());
  for (std::size_t start = 0, batch = 0; start < in.size(); start += kBatch, ++batch) {
    const std::size_t n = std::min(kBatch, in.size() - start);
    gpu::Launch launch;
    launch.kernel = kernel;
    launch.bytes = n;
    launch.first_block = start / kBlockLen;
    if (kernel == Kernel::ctr) launch.state = gpu::state_words(spec.iv);
    if (kernel == Kernel::cbc_decrypt || kernel == Kernel::cfb128_decrypt) {
      Block chain = spec.iv;
      if (start != 0) std::copy_n(in.begin() + static_cast<std::ptrdiff_t>(start - kBlockLen), kBlockLen, chain.begin());
      launch.state = gpu::state_words(chain);
    }
    const Path path = pinned == nullptr ? Path::staged : static_cast<Path>(batch % 3);
    switch (path) {
      case Path::staged:
        std::memcpy(lane.host_buffer(), in.data() + start, n);
        lane.enqueue(launch, lane.host_buffer(), lane.host_buffer());
        lane.wait();
        std::memcpy(out.data() + start, lane.host_buffer(), n);
        break;
      case Path::direct:
        lane.enqueue(launch, pinned_in + start, pinned_out + start);
        lane.wait();
        std::memcpy(out.data() + start, pinned_out + start, n);
        break;
      case Path::in_place:
        std::memcpy(pinned_out + start, in.data() + start, n);
        lane.enqueue(launch, pinned_out + start, pinned_out + start);
        lane.wait();
        std::memcpy(out.data() + start, pinned_out + start, n);
        break;
    }
  }
  return out;
}

// Every kernel and key size through kLanes lanes from kLanes threads at once,
// each lane under its own keys, against OpenSSL.
void check_lanes_against_openssl(gpu::Device& device) {
  std::vector<std::unique_ptr<gpu::Lane>> lanes;
  for (unsigned l = 0; l < kLanes; ++l) lanes.push_back(device.open_lane(kBatch, l == 0));
  std::vector<std::string> failures(kLanes);
  std::latch start(kLanes);
  std::vector<std::thread> threads;
  for (unsigned l = 0; l < kLanes; ++l) {
    threads.emplace_back([&, l] {
      start.arrive_and_wait();
      // Three batches (the last one partial in the stream modes), so that
      // each path runs once; twice over, twice the message long for the
      // direct path's separate output.
      const std::size_t whole = 3 * kBatch - 2 * kBlockLen;
      auto* pinned = static_cast<std::uint8_t*>(device.allocate_pinned(2 * whole));
      try {
        for (int k = 0; k < gpu::kKernelCount; ++k) {
          const auto kernel = static_cast<Kernel>(k);
          const bool stream = kernel == Kernel::ctr || kernel == Kernel::cfb128_decrypt;
          const std::size_t len = stream ? whole - 5 : whole;
          for (unsigned key_bits : {128u, 256u}) {
            const std::uint32_t seed = 1000 * l + 10 * static_cast<std::uint32_t>(k) + key_bits;
            const CipherSpec spec = spec_for(kernel, key_bits, seed);
            const std::vector<std::uint8_t> in = test::random_bytes(len, seed + 7);
            const std::vector<std::uint8_t> got = run_message(*lanes[l], spec, kernel, in, pinned);
            if (got != openssl_oneshot(spec, in)) {
              failures[l] += "kernel " + std::to_string(k) + " AES-" + std::to_string(key_bits) + " differs; ";
            }
          }
        }
      } catch (const std::exception& e) {
        failures[l] += e.what();
      }
      if (pinned != nullptr) device.free_pinned(pinned);
    });
  }
  for (std::thread& t : threads) t.join();
  for (unsigned l = 0; l < kLanes; ++l) EXPECT_EQ(failures[l], "") << "lane " << l;
}

TEST(HostDevice, LanesFromThreadsAtOnceMatchOpenSsl) {
  const std::unique_ptr<gpu::Device> device = gpu::open_host_device();
  check_lanes_against_openssl(*device);
}

// A device can only copy page-locked memory by DMA: the host adapter refuses
// the rest, so that the backend is tested against that rule.
TEST(HostDevice, RefusesMemoryThatIsNotPageLocked) {
  const std::unique_ptr<gpu::Device> device = gpu::open_host_device();
  const std::unique_ptr<gpu::Lane> lane = device->open_lane(kBatch, false);
  lane->set_keys(gpu::expand_encrypt_key(test::random_bytes(16, 1).data(), 16));
  gpu::Launch launch;
  launch.bytes = 64;
  std::vector<std::uint8_t> ordinary(2 * launch.bytes);
  EXPECT_THROW(lane->enqueue(launch, ordinary.data(), lane->host_buffer()), Error);
  EXPECT_THROW(lane->enqueue(launch, lane->host_buffer(), ordinary.data()), Error);
  // Past the end of an allocation, or of the lane's buffer.
  auto* pinned = static_cast<std::uint8_t*>(device->allocate_pinned(launch.bytes));
  EXPECT_THROW(lane->enqueue(launch, pinned + 16, pinned), Error);
  EXPECT_THROW(lane->enqueue(launch, lane->host_buffer() + kBatch - 16, lane->host_buffer()), Error);
  // What a pin registered may be copied, wholly inside it.
  ASSERT_TRUE(device->pin_host(ordinary.data(), ordinary.size()));
  lane->enqueue(launch, ordinary.data(), pinned);
  lane->wait();
  EXPECT_THROW(lane->enqueue(launch, ordinary.data() + launch.bytes + 16, pinned), Error);
  device->unpin_host(ordinary.data());
  EXPECT_THROW(lane->enqueue(launch, ordinary.data(), pinned), Error);
  device->free_pinned(pinned);
}

// CUDA's rule: a registration may not overlap another, or page-locked memory
// the device allocated.
TEST(HostDevice, PinsFollowCudasOverlapRule) {
  const std::unique_ptr<gpu::Device> device = gpu::open_host_device();
  std::vector<std::uint8_t> memory(4096);
  ASSERT_TRUE(device->pin_host(memory.data() + 1024, 1024));
  EXPECT_FALSE(device->pin_host(memory.data(), 1025));
  EXPECT_FALSE(device->pin_host(memory.data() + 2047, 10));
  EXPECT_TRUE(device->pin_host(memory.data() + 2048, 1024));
  device->unpin_host(memory.data() + 1024);
  EXPECT_TRUE(device->pin_host(memory.data(), 1025));
  auto* pinned = static_cast<std::uint8_t*>(device->allocate_pinned(256));
  EXPECT_FALSE(device->pin_host(pinned + 100, 10));
  device->free_pinned(pinned);
  device->unpin_host(memory.data());
  device->unpin_host(memory.data() + 2048);
}

// The hook sees the device's output before it comes back: a test plays a
// device that computes wrongly with it.
TEST(HostDevice, AfterKernelHookChangesTheOutput) {
  gpu::HostDeviceOptions options;
  options.after_kernel = [](std::uint8_t* out, std::size_t n) {
    if (n > 0) out[0] ^= 1;
  };
  const std::unique_ptr<gpu::Device> device = gpu::open_host_device(options);
  const std::unique_ptr<gpu::Lane> lane = device->open_lane(kBatch, false);
  const CipherSpec spec = spec_for(Kernel::ecb_encrypt, 128, 5);
  const std::vector<std::uint8_t> in = test::random_bytes(64, 6);
  std::vector<std::uint8_t> got = run_message(*lane, spec, Kernel::ecb_encrypt, in, nullptr);
  std::vector<std::uint8_t> want = openssl_oneshot(spec, in);
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(got[0], want[0] ^ 1);
  got[0] = want[0];
  EXPECT_EQ(got, want);
}

TEST(HostDevice, KernelSecondsRunsUnderTheKeysGiven) {
  const std::unique_ptr<gpu::Device> device = gpu::open_host_device();
  gpu::Launch launch;
  launch.kernel = Kernel::ctr;
  launch.bytes = 1 << 16;
  EXPECT_GT(device->kernel_seconds(launch, gpu::expand_encrypt_key(test::random_bytes(32, 3).data(), 32), 2), 0.0);
  // Round keys of no AES: the kernel bodies refuse them.
  EXPECT_ANY_THROW(device->kernel_seconds(launch, gpu::RoundKeys{}, 1));
}

// Every GPU API this build has (the rows of cipher/backends.cpp, so a new
// API is tested with no line here): its default device's lanes. An API with
// no device is skipped, saying why (PoCL gives OpenCL a CPU device in CI).
TEST(GpuApis, LanesFromThreadsAtOnceMatchOpenSsl) {
  std::string none;
  bool ran = false;
  for (const GpuApi& api : gpu_apis()) {
    if (api.list_devices().empty()) {
      none += (none.empty() ? "" : "; ") + ("no " + std::string(api.label) + " device (" + api.versions() + ")");
      continue;
    }
    SCOPED_TRACE(std::string(api.name));
    const std::unique_ptr<gpu::Device> device = api.open(std::nullopt, GpuGeometry{});
    check_lanes_against_openssl(*device);
    ran = true;
  }
  if (!ran) GTEST_SKIP() << (none.empty() ? "no GPU API built in" : none);
  if (!none.empty()) std::cout << "not run: " << none << "\n";
}

#ifdef PAES_HAVE_OPENCL
TEST(OpenClDevice, ListsAndPicksDevices) {
  const GpuApi api = opencl_api();
  EXPECT_EQ(api.name, "opencl");
  const std::vector<GpuDeviceInfo> devices = api.list_devices();
  if (devices.empty()) GTEST_SKIP() << "no OpenCL device found (install pocl-opencl-icd for a CPU device)";
  for (std::size_t i = 0; i < devices.size(); ++i) {
    EXPECT_EQ(devices[i].index, i);
    EXPECT_FALSE(devices[i].name.empty());
    EXPECT_FALSE(devices[i].platform.empty());
  }
  try {
    api.open(static_cast<unsigned>(devices.size()), GpuGeometry{});
    ADD_FAILURE() << "a device index past the end was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("this machine has"), std::string::npos) << e.what();
  }
  const std::unique_ptr<gpu::Device> device = api.open(std::nullopt, GpuGeometry{});
  EXPECT_NE(device->label().find(devices.front().name), std::string::npos) << device->label();
}

TEST(OpenClDevice, KernelSecondsTimesTheKernel) {
  const GpuApi api = opencl_api();
  if (api.list_devices().empty()) GTEST_SKIP() << "no OpenCL device found (install pocl-opencl-icd)";
  const std::unique_ptr<gpu::Device> device = api.open(std::nullopt, GpuGeometry{});
  gpu::Launch launch;
  launch.kernel = Kernel::ecb_encrypt;
  launch.bytes = 1 << 16;
  EXPECT_GT(device->kernel_seconds(launch, gpu::expand_encrypt_key(test::random_bytes(16, 3).data(), 16), 2), 0.0);
}

TEST(OpenClDevice, ErrorNames) {
  EXPECT_EQ(gpu::opencl_error_name(-5), "CL_OUT_OF_RESOURCES");
  EXPECT_EQ(gpu::opencl_error_name(-9999), "OpenCL error -9999");
}
#endif

#ifdef PAES_HAVE_CUDA
// Why the CUDA tests skip: no device listed, with the versions, which say
// whether there is a driver and whether it is older than the runtime needs
// (the runtime lists no device then either).
std::string no_cuda_device(const GpuApi& api) { return "no CUDA device (" + api.versions() + ")"; }

// A batch longer than the lane's buffers is refused before anything is
// enqueued (the runtime need not bound a copy by the allocation it writes),
// and the lane works on.
TEST(CudaDevice, RefusesABatchLongerThanTheLane) {
  const GpuApi api = cuda_api();
  if (api.list_devices().empty()) GTEST_SKIP() << no_cuda_device(api);
  const std::unique_ptr<gpu::Device> device = api.open(std::nullopt, GpuGeometry{});
  const std::unique_ptr<gpu::Lane> lane = device->open_lane(kBatch, false);
  const CipherSpec spec = spec_for(Kernel::ecb_encrypt, 128, 11);
  lane->set_keys(gpu::expand_encrypt_key(spec.key.data(), spec.key.size()));
  auto* pinned = static_cast<std::uint8_t*>(device->allocate_pinned(2 * kBatch));
  ASSERT_NE(pinned, nullptr);
  gpu::Launch launch;
  launch.kernel = Kernel::ecb_encrypt;
  launch.bytes = 2 * kBatch;
  EXPECT_THROW(lane->enqueue(launch, pinned, pinned), Error);
  lane->drain_quietly();
  device->free_pinned(pinned);
  const std::vector<std::uint8_t> in = test::random_bytes(kBatch, 12);
  EXPECT_EQ(run_message(*lane, spec, Kernel::ecb_encrypt, in, nullptr), openssl_oneshot(spec, in));
}

// The runtime's last error belongs to the host thread, not the lane: one
// that the caller's own CUDA call left on the worker's thread is no failed
// launch of the lane's.
TEST(CudaDevice, ALaunchIgnoresAnErrorLeftOnTheThread) {
  const GpuApi api = cuda_api();
  if (api.list_devices().empty()) GTEST_SKIP() << no_cuda_device(api);
  const std::unique_ptr<gpu::Device> device = api.open(std::nullopt, GpuGeometry{});
  const std::unique_ptr<gpu::Lane> lane = device->open_lane(kBatch, false);
  const CipherSpec spec = spec_for(Kernel::ecb_encrypt, 256, 13);
  const std::vector<std::uint8_t> in = test::random_bytes(kBatch, 14);
  // Not sticky: it stays the thread's last error until cudaGetLastError().
  ASSERT_EQ(cudaSetDevice(-1), cudaErrorInvalidDevice);
  EXPECT_EQ(run_message(*lane, spec, Kernel::ecb_encrypt, in, nullptr), openssl_oneshot(spec, in));
}

// After an enqueue() that failed at the launch, the upload it had queued
// still reads the caller's memory: drain_quietly() waits for it too. Timed:
// what the device still has to do once drain_quietly() returns is far less
// than the upload (a quarter GiB, milliseconds at any link's rate).
TEST(CudaDevice, DrainWaitsForWhatAFailedEnqueueQueued) {
  const GpuApi api = cuda_api();
  if (api.list_devices().empty()) GTEST_SKIP() << no_cuda_device(api);
  const std::unique_ptr<gpu::Device> device = api.open(std::nullopt, GpuGeometry{});
  constexpr std::size_t kBig = std::size_t{256} << 20;
  const double upload_seconds = static_cast<double>(kBig) / device->measure_link(kBig, 1).up;
  const std::unique_ptr<gpu::Lane> lane = device->open_lane(kBig, false);
  gpu::Launch launch;
  launch.kernel = Kernel::ecb_encrypt;
  launch.bytes = kBig;
  lane->set_keys(gpu::RoundKeys{});  // no AES: the launch is refused after the upload is queued
  EXPECT_THROW(lane->enqueue(launch, lane->host_buffer(), lane->host_buffer()), Error);
  lane->drain_quietly();
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::chrono::duration<double> left = std::chrono::steady_clock::now() - start;
  EXPECT_LT(left.count(), upload_seconds / 4) << "the upload alone takes " << upload_seconds << " s";
}
#endif

}  // namespace
}  // namespace paes
