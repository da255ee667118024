// What is the OpenCL adapter's own: listing and picking devices, and error
// names. Its AES, batching and pipeline run in the typed driver suite
// (gpu_driver_test.cpp) on whatever device the ICD loader offers.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "engine/gpu/gpu_engine.hpp"
#include "engine/gpu/opencl_engine.hpp"
#include "paes/error.hpp"

namespace paes {
namespace {

TEST(OpenClEngine, DeviceListAndSelection) {
  const auto devices = list_opencl_devices();
  if (devices.empty()) GTEST_SKIP() << "no OpenCL device found (install pocl-opencl-icd for a CPU device)";
  for (std::size_t i = 0; i < devices.size(); ++i) {
    EXPECT_EQ(devices[i].index, i);
    EXPECT_FALSE(devices[i].name.empty());
    EXPECT_FALSE(devices[i].platform.empty());
  }
  OpenClOptions opts;
  opts.device_index = static_cast<unsigned>(devices.size());
  try {
    OpenClEngine bad(opts);
    ADD_FAILURE() << "a device index past the end was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("--device"), std::string::npos);
  }
  opts.device_index = 0;
  const OpenClEngine engine(opts);
  EXPECT_EQ(engine.device().index, 0u);
  EXPECT_EQ(engine.device().name, devices[0].name);
}

// --threads N on a GPU engine: the CPU's threads read and write, half each.
TEST(OpenClEngine, ThreadsOptionSetsTheThreadsThatMoveTheData) {
  if (list_opencl_devices().empty()) GTEST_SKIP() << "no OpenCL device found (install pocl-opencl-icd)";
  const auto copy_threads = [](unsigned threads) {
    const std::unique_ptr<Engine> engine = make_engine(EngineKind::opencl, threads, std::nullopt);
    return dynamic_cast<GpuEngine<OpenClEngine, OpenClOptions>&>(*engine).backend().copy_threads();
  };
  EXPECT_EQ(copy_threads(6), 3u);
  EXPECT_EQ(copy_threads(1), 1u);
  EXPECT_EQ(copy_threads(32), 16u);
  EXPECT_EQ(copy_threads(0), std::clamp(online_cpus() / 2, 1u, 8u));  // the default
}

TEST(OpenClEngine, ErrorNames) {
  EXPECT_EQ(opencl_error_name(-5), "CL_OUT_OF_RESOURCES");
  EXPECT_EQ(opencl_error_name(-11), "CL_BUILD_PROGRAM_FAILURE");
  EXPECT_EQ(opencl_error_name(-9999), "OpenCL error -9999");
}

}  // namespace
}  // namespace paes
