#include "engine/gpu/cuda_engine.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>

#include "cipher/gpu/aes_tables.hpp"
#include "cipher/gpu/key_schedule.hpp"
#include "paes/error.hpp"

namespace paes::gpu {

// The kernel launchers, defined in src/gpu/kernels.cu (compiled by nvcc). Each
// launches its kernel on `stream` with `threads` threads per block and `grid`
// blocks and returns cudaGetLastError(). state: 4 big-endian words (see
// kernels.cu); round_keys: 4 * (rounds + 1) words; tables: the device copy of
// the PAES_TABLE_WORDS table image.
using CudaLaunchFn = cudaError_t (*)(unsigned grid, unsigned threads, cudaStream_t stream,
                                     const void* in, void* out, std::uint64_t nbytes,
                                     std::uint64_t first_block, const std::uint32_t* state,
                                     const std::uint32_t* round_keys, int rounds,
                                     const std::uint32_t* tables);
cudaError_t launch_ecb_encrypt(unsigned, unsigned, cudaStream_t, const void*, void*, std::uint64_t,
                               std::uint64_t, const std::uint32_t*, const std::uint32_t*, int,
                               const std::uint32_t*);
cudaError_t launch_ecb_decrypt(unsigned, unsigned, cudaStream_t, const void*, void*, std::uint64_t,
                               std::uint64_t, const std::uint32_t*, const std::uint32_t*, int,
                               const std::uint32_t*);
cudaError_t launch_ctr(unsigned, unsigned, cudaStream_t, const void*, void*, std::uint64_t,
                       std::uint64_t, const std::uint32_t*, const std::uint32_t*, int,
                       const std::uint32_t*);
cudaError_t launch_cbc_decrypt(unsigned, unsigned, cudaStream_t, const void*, void*, std::uint64_t,
                               std::uint64_t, const std::uint32_t*, const std::uint32_t*, int,
                               const std::uint32_t*);
cudaError_t launch_cfb128_decrypt(unsigned, unsigned, cudaStream_t, const void*, void*,
                                  std::uint64_t, std::uint64_t, const std::uint32_t*,
                                  const std::uint32_t*, int, const std::uint32_t*);

}  // namespace paes::gpu

namespace paes {

namespace {

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    throw Error(std::string("CUDA: ") + what + " failed: " + cudaGetErrorString(err) + " (" +
                cudaGetErrorName(err) + ")");
  }
}

// The number of devices, or the reason there are none to use.
int device_count(cudaError_t* why) {
  int count = 0;
  *why = cudaGetDeviceCount(&count);
  if (*why != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky: clear it for later calls
    return 0;
  }
  return count;
}

CudaDeviceInfo describe_device(int dev) {
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
  CudaDeviceInfo info;
  info.index = static_cast<unsigned>(dev);
  info.name = prop.name;
  info.compute_major = prop.major;
  info.compute_minor = prop.minor;
  info.multiprocessors = static_cast<unsigned>(prop.multiProcessorCount);
  info.global_mem_bytes = prop.totalGlobalMem;
  info.shared_mem_per_block_bytes = prop.sharedMemPerBlock;
  info.memory_bus_bits = static_cast<unsigned>(prop.memoryBusWidth);
  std::array<char, 32> bus{};
  check(cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), dev),
        "cudaDeviceGetPCIBusId");
  info.pci_bus_id = bus.data();
  return info;
}

std::string version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

}  // namespace

std::vector<CudaDeviceInfo> list_cuda_devices() {
  cudaError_t why = cudaSuccess;
  const int count = device_count(&why);
  std::vector<CudaDeviceInfo> list;
  for (int dev = 0; dev < count; ++dev) list.push_back(describe_device(dev));
  return list;
}

std::string cuda_version_string() {
  int runtime = 0;
  int driver = 0;
  check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  // 0 without a driver; an error return means the same.
  if (cudaDriverGetVersion(&driver) != cudaSuccess) {
    (void)cudaGetLastError();
    driver = 0;
  }
  return "runtime " + version_string(runtime) + ", driver " +
         (driver == 0 ? std::string("none") : version_string(driver));
}

namespace {

gpu::CudaLaunchFn launcher(gpu::Kernel kernel) {
  switch (kernel) {
    case gpu::Kernel::ecb_encrypt: return gpu::launch_ecb_encrypt;
    case gpu::Kernel::ecb_decrypt: return gpu::launch_ecb_decrypt;
    case gpu::Kernel::cbc_decrypt: return gpu::launch_cbc_decrypt;
    case gpu::Kernel::cfb128_decrypt: return gpu::launch_cfb128_decrypt;
    case gpu::Kernel::ctr: break;
  }
  return gpu::launch_ctr;
}

// One CUDA device as the driver's gpu::Device.
class CudaDevice final : public gpu::Device {
 public:
  CudaDevice(const CudaOptions& options, int device, CudaDeviceInfo info)
      : options_(options), device_(device), info_(std::move(info)) {
    use_device();
    const auto& image = gpu::aes_tables().image;
    void* tables = nullptr;
    check(cudaMalloc(&tables, sizeof(image)), "cudaMalloc (tables)");
    tables_ = static_cast<std::uint32_t*>(tables);
    try {  // no destructor runs for a constructor that throws: free here
      check(cudaMemcpy(tables_, image.data(), sizeof(image), cudaMemcpyHostToDevice), "cudaMemcpy (tables)");
      // From pageable memory, cudaMemcpy may return before its DMA has
      // landed, and the lanes' streams are non-blocking: they don't wait for
      // the legacy stream it ran on. The kernels must see whole tables.
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (tables)");
    } catch (...) {
      (void)cudaFree(tables_);
      throw;
    }
  }
  // Releases what was allocated, ignoring errors: after a kernel fault the
  // context is gone and every call fails, but the process must go on.
  ~CudaDevice() override {
    (void)cudaSetDevice(device_);
    free_lanes();
    if (tables_ != nullptr) (void)cudaFree(tables_);
    (void)cudaGetLastError();
  }

  const CudaDeviceInfo& info() const { return info_; }
  std::string label() const override {
    return "CUDA device " + std::to_string(info_.index) + " (" + info_.name + ")";
  }

  void open_lanes(unsigned count, std::size_t batch_bytes, bool profile) override {
    use_device();
    free_lanes();
    lanes_.resize(count);
    for (Lane& lane : lanes_) {
      // Non-blocking: no implicit synchronisation with the legacy default
      // stream, so nothing else in the process serialises the batches.
      check(cudaStreamCreateWithFlags(&lane.stream, cudaStreamNonBlocking), "cudaStreamCreate");
      void* host = nullptr;
      check(cudaHostAlloc(&host, batch_bytes, cudaHostAllocDefault), "cudaHostAlloc");
      lane.host = static_cast<std::uint8_t*>(host);
      check(cudaMalloc(&lane.dev_in, batch_bytes), "cudaMalloc (input)");
      check(cudaMalloc(&lane.dev_out, batch_bytes), "cudaMalloc (output)");
      if (profile) {
        for (cudaEvent_t& e : lane.events) check(cudaEventCreate(&e), "cudaEventCreate");
      }
    }
    profile_ = profile;
  }

  std::uint8_t* host_buffer(unsigned lane) override { return lanes_[lane].host; }

  // Kept on the host: they travel with each launch as a kernel parameter.
  void set_keys(const gpu::RoundKeys& keys) override { keys_ = keys; }

  void enqueue(unsigned l, const gpu::Launch& launch, const std::uint8_t* from, std::uint8_t* to) override {
    use_device();  // the current device is per host thread
    Lane& lane = lanes_[l];
    const std::size_t n = launch.bytes;
    if (profile_) check(cudaEventRecord(lane.events[0], lane.stream), "cudaEventRecord");
    check(cudaMemcpyAsync(lane.dev_in, from, n, cudaMemcpyHostToDevice, lane.stream),
          "cudaMemcpyAsync (host to device)");
    if (profile_) check(cudaEventRecord(lane.events[1], lane.stream), "cudaEventRecord");
    const std::size_t blocks = (n + kBlockLen - 1) / kBlockLen;
    const std::size_t per_thread = options_.blocks_per_thread;
    const std::size_t tpb = options_.threads_per_block;
    const std::size_t threads = (blocks + per_thread - 1) / per_thread;
    const std::size_t grid =
        std::clamp<std::size_t>((threads + tpb - 1) / tpb, 1, std::numeric_limits<int>::max());
    check(launcher(launch.kernel)(static_cast<unsigned>(grid), static_cast<unsigned>(tpb), lane.stream,
                                  lane.dev_in, lane.dev_out, n, launch.first_block, launch.state.data(),
                                  keys_.words.data(), keys_.rounds, tables_),
          "kernel launch");
    if (profile_) check(cudaEventRecord(lane.events[2], lane.stream), "cudaEventRecord");
    check(cudaMemcpyAsync(to, lane.dev_out, n, cudaMemcpyDeviceToHost, lane.stream),
          "cudaMemcpyAsync (device to host)");
    if (profile_) check(cudaEventRecord(lane.events[3], lane.stream), "cudaEventRecord");
  }

  gpu::LaneTimes wait(unsigned l) override {
    use_device();
    Lane& lane = lanes_[l];
    check(cudaStreamSynchronize(lane.stream), "cudaStreamSynchronize");
    gpu::LaneTimes times;
    if (profile_) {
      float ms[3] = {};
      for (std::size_t i = 0; i < 3; ++i) {
        check(cudaEventElapsedTime(&ms[i], lane.events[i], lane.events[i + 1]), "cudaEventElapsedTime");
      }
      times = {ms[0] * 1e-3, ms[1] * 1e-3, ms[2] * 1e-3};
    }
    return times;
  }

  // cudaHostRegister: pinned memory is mapped for the device's DMA engines,
  // so cudaMemcpyAsync copies it at the link's rate without a bounce buffer.
  // It fails with cudaErrorHostMemoryAlreadyRegistered for memory that
  // overlaps a registration at all, not only memory wholly inside one, and
  // a copy spanning registered and unregistered memory fails: such memory
  // is refused, and staged.
  bool pin_host(const void* data, std::size_t len) override {
    use_device();
    // The runtime takes a non-const pointer; the device only reads the input.
    const cudaError_t err = cudaHostRegister(const_cast<void*>(data), len, cudaHostRegisterDefault);
    if (err == cudaSuccess) return true;
    (void)cudaGetLastError();  // not sticky: clear it for later calls
    return false;
  }
  void unpin_host(const void* data) noexcept override {
    (void)cudaSetDevice(device_);
    (void)cudaHostUnregister(const_cast<void*>(data));
    (void)cudaGetLastError();
  }

  gpu::LinkRates measure_link(std::size_t bytes, unsigned repeats) override {
    use_device();
    Scratch up(bytes), down(bytes);
    const auto rate = [&](float ms) { return ms > 0 ? static_cast<double>(bytes) / (ms * 1e-3) : 0.0; };
    gpu::LinkRates best;
    for (unsigned r = 0; r < repeats; ++r) {
      best.up = std::max(best.up, rate(up.time([&] { up.copy_up(); })));
      best.down = std::max(best.down, rate(down.time([&] { down.copy_down(); })));
      // Both ways at once: each on its own stream, each timed by its own events.
      up.record_start();
      down.record_start();
      up.copy_up();
      down.copy_down();
      best.both = std::max(best.both, std::min(rate(up.record_end()), rate(down.record_end())));
    }
    return best;
  }

  double kernel_seconds(const gpu::Launch& launch, unsigned repeats) override {
    use_device();
    Scratch buffers(launch.bytes, false);
    const std::size_t blocks = (launch.bytes + kBlockLen - 1) / kBlockLen;
    const std::size_t threads = (blocks + options_.blocks_per_thread - 1) / options_.blocks_per_thread;
    const std::size_t grid = std::clamp<std::size_t>((threads + options_.threads_per_block - 1) /
                                                         options_.threads_per_block, 1,
                                                     std::numeric_limits<int>::max());
    double best = 0;
    for (unsigned r = 0; r < repeats; ++r) {
      const float ms = buffers.time([&] {
        check(launcher(launch.kernel)(static_cast<unsigned>(grid), options_.threads_per_block, buffers.stream,
                                      buffers.dev_in, buffers.dev_out, launch.bytes, launch.first_block,
                                      launch.state.data(), keys_.words.data(), keys_.rounds, tables_),
              "kernel launch");
      });
      const double seconds = ms * 1e-3;
      if (r == 0 || seconds < best) best = seconds;
    }
    return best;
  }

  void drain_quietly() noexcept override {
    (void)cudaSetDevice(device_);
    for (Lane& lane : lanes_) {
      if (lane.stream != nullptr) (void)cudaStreamSynchronize(lane.stream);
    }
    (void)cudaGetLastError();
  }

 private:
  struct Lane {
    cudaStream_t stream = nullptr;
    std::uint8_t* host = nullptr;  // cudaHostAlloc: page-locked, so copies are async DMA
    void* dev_in = nullptr;
    void* dev_out = nullptr;
    // With profiling: before the upload, after it, after the kernel, after the download.
    std::array<cudaEvent_t, 4> events{};
  };

  // Buffers and a stream of a measurement's own, freed with it; page-locked
  // host memory only `with_host` (the link's, not the kernel's).
  struct Scratch {
    explicit Scratch(std::size_t n, bool with_host = true) : bytes(n) {
      try {
        check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
        check(cudaEventCreate(&start), "cudaEventCreate");
        check(cudaEventCreate(&end), "cudaEventCreate");
        if (with_host) check(cudaHostAlloc(&host, n, cudaHostAllocDefault), "cudaHostAlloc");
        check(cudaMalloc(&dev_in, n), "cudaMalloc");
        check(cudaMalloc(&dev_out, n), "cudaMalloc");
        check(cudaMemset(dev_in, 0x5a, n), "cudaMemset");
      } catch (...) {  // no destructor runs for a constructor that throws
        release();
        throw;
      }
      if (host != nullptr) std::memset(host, 0xa5, n);
    }
    ~Scratch() { release(); }
    // Frees what was made, ignoring errors (null handles are skipped).
    void release() noexcept {
      if (stream != nullptr) (void)cudaStreamSynchronize(stream);
      if (dev_out != nullptr) (void)cudaFree(dev_out);
      if (dev_in != nullptr) (void)cudaFree(dev_in);
      if (host != nullptr) (void)cudaFreeHost(host);
      if (end != nullptr) (void)cudaEventDestroy(end);
      if (start != nullptr) (void)cudaEventDestroy(start);
      if (stream != nullptr) (void)cudaStreamDestroy(stream);
    }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    void copy_up() { check(cudaMemcpyAsync(dev_in, host, bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync"); }
    void copy_down() {
      check(cudaMemcpyAsync(host, dev_in, bytes, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
    }
    void record_start() { check(cudaEventRecord(start, stream), "cudaEventRecord"); }
    // Milliseconds from record_start, once the stream is done.
    float record_end() {
      check(cudaEventRecord(end, stream), "cudaEventRecord");
      check(cudaEventSynchronize(end), "cudaEventSynchronize");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, start, end), "cudaEventElapsedTime");
      return ms;
    }
    template <class Work>
    float time(const Work& work) {
      record_start();
      work();
      return record_end();
    }

    std::size_t bytes;
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, end = nullptr;
    void* host = nullptr;
    void* dev_in = nullptr;
    void* dev_out = nullptr;
  };

  void use_device() const { check(cudaSetDevice(device_), "cudaSetDevice"); }
  void free_lanes() noexcept {
    drain_quietly();
    for (Lane& lane : lanes_) {
      for (cudaEvent_t e : lane.events) {
        if (e != nullptr) (void)cudaEventDestroy(e);
      }
      if (lane.dev_in != nullptr) (void)cudaFree(lane.dev_in);
      if (lane.dev_out != nullptr) (void)cudaFree(lane.dev_out);
      if (lane.host != nullptr) (void)cudaFreeHost(lane.host);
      if (lane.stream != nullptr) (void)cudaStreamDestroy(lane.stream);
    }
    lanes_.clear();
  }

  CudaOptions options_;
  int device_ = 0;
  CudaDeviceInfo info_;
  std::uint32_t* tables_ = nullptr;  // device copy of the table image
  std::vector<Lane> lanes_;
  bool profile_ = false;
  gpu::RoundKeys keys_;  // wiped on destruction
};

std::unique_ptr<CudaDevice> open_cuda_device(const CudaOptions& options) {
  if (options.threads_per_block == 0 || options.threads_per_block % 32 != 0 || options.threads_per_block > 1024) {
    throw usage_error("CUDA: threads per block must be a multiple of 32 from 32 to 1024, got " +
                      std::to_string(options.threads_per_block));
  }
  CudaOptions checked = options;
  checked.blocks_per_thread = std::max(1u, options.blocks_per_thread);
  cudaError_t why = cudaSuccess;
  const int count = device_count(&why);
  if (why != cudaSuccess) {
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0) {
      (void)cudaGetLastError();
      throw Error("CUDA: no CUDA device (no NVIDIA driver is installed)");
    }
    throw Error(std::string("CUDA: no CUDA device available (cudaGetDeviceCount: ") + cudaGetErrorString(why) + ")");
  }
  if (count == 0) throw Error("CUDA: no CUDA device found");
  const unsigned index = options.device_index.value_or(0);
  if (index >= static_cast<unsigned>(count)) {
    throw no_such_device("CUDA", index, static_cast<std::size_t>(count));
  }
  const int device = static_cast<int>(index);
  return std::make_unique<CudaDevice>(checked, device, describe_device(device));
}

}  // namespace

CudaEngine::CudaEngine(const CudaOptions& options) : GpuDriver(open_cuda_device(options), options) {}

const CudaDeviceInfo& CudaEngine::device() const { return static_cast<const CudaDevice&>(gpu_device()).info(); }

}  // namespace paes
