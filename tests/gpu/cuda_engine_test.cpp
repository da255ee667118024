// What is the CUDA adapter's own: refusing to start without a device (with
// the message a user sees), its options, and listing and picking devices.
// Its AES, batching and pipeline run in the typed driver suite
// (gpu_driver_test.cpp) when there is a device.
#include <gtest/gtest.h>

#include <string>

#include "engine/gpu/cuda_engine.hpp"
#include "paes/error.hpp"
#include "test_support.hpp"

namespace paes {
namespace {

using test::make_spec;

TEST(CudaEngineNoDevice, RefusesWithAClearMessage) {
  if (!list_cuda_devices().empty()) GTEST_SKIP() << "a CUDA device is present";
  try {
    CudaEngine engine;
    ADD_FAILURE() << "the engine started without a CUDA device";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::failure);
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
  }
  // `paes info` still works: it lists nothing and names the versions.
  EXPECT_NE(cuda_version_string().find("runtime "), std::string::npos);
}

TEST(CudaEngineOptions, BadThreadsPerBlockIsAUsageError) {
  CudaOptions opts;
  opts.threads_per_block = 100;
  try {
    CudaEngine engine(opts);
    ADD_FAILURE() << "100 threads per block was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
  }
}

TEST(CudaEngineSupport, ParallelDirectionsOnly) {
  for (const Mode mode : kAllModes) {
    for (const Direction d : {Direction::encrypt, Direction::decrypt}) {
      const CipherSpec spec = make_spec(mode, d, 128, 3);
      const bool parallel = mode == Mode::ecb || mode == Mode::ctr ||
                            (d == Direction::decrypt && (mode == Mode::cbc || mode == Mode::cfb128));
      EXPECT_EQ(CudaEngine::supports(spec), parallel) << mode_name(mode) << " " << direction_name(d);
    }
  }
}

TEST(CudaEngine, DeviceListAndSelection) {
  const auto devices = list_cuda_devices();
  if (devices.empty()) GTEST_SKIP() << "no CUDA device";
  for (std::size_t i = 0; i < devices.size(); ++i) {
    EXPECT_EQ(devices[i].index, i);
    EXPECT_FALSE(devices[i].name.empty());
    EXPECT_GT(devices[i].multiprocessors, 0u);
    EXPECT_GE(devices[i].compute_major, 3);
  }
  EXPECT_NE(cuda_version_string().find("driver "), std::string::npos);
  CudaOptions opts;
  opts.device_index = static_cast<unsigned>(devices.size());
  try {
    CudaEngine bad(opts);
    ADD_FAILURE() << "a device index past the end was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("--device"), std::string::npos);
  }
}

}  // namespace
}  // namespace paes
