#include "cipher/cuda/cuda_device.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cipher/gpu/aes_tables.hpp"
#include "cipher/gpu/key_schedule.hpp"
#include "paes/error.hpp"
#include "paes/mode.hpp"
#include "util/stack_facts.hpp"

namespace paes::gpu {

// The kernel launchers, defined in cipher/cuda/kernels.cu (compiled by nvcc).
// Each launches its kernel on `stream` with `threads` threads per block and
// `grid` blocks and returns cudaGetLastError(). state: 4 big-endian words
// (see kernels.cu); round_keys: 4 * (rounds + 1) words, host memory passed
// by value as a kernel parameter; tables: the device copy of the
// PAES_TABLE_WORDS table image.
using CudaLaunchFn = cudaError_t (*)(unsigned grid, unsigned threads, cudaStream_t stream, const void* in, void* out,
                                     std::uint64_t nbytes, std::uint64_t first_block, const std::uint32_t* state,
                                     const std::uint32_t* round_keys, int rounds, const std::uint32_t* tables);
cudaError_t launch_ecb_encrypt(unsigned, unsigned, cudaStream_t, const void*, void*, std::uint64_t, std::uint64_t,
                               const std::uint32_t*, const std::uint32_t*, int, const std::uint32_t*);
cudaError_t launch_ecb_decrypt(unsigned, unsigned, cudaStream_t, const void*, void*, std::uint64_t, std::uint64_t,
                               const std::uint32_t*, const std::uint32_t*, int, const std::uint32_t*);
cudaError_t launch_ctr(unsigned, unsigned, cudaStream_t, const void*, void*, std::uint64_t, std::uint64_t,
                       const std::uint32_t*, const std::uint32_t*, int, const std::uint32_t*);
cudaError_t launch_cbc_decrypt(unsigned, unsigned, cudaStream_t, const void*, void*, std::uint64_t, std::uint64_t,
                               const std::uint32_t*, const std::uint32_t*, int, const std::uint32_t*);
cudaError_t launch_cfb128_decrypt(unsigned, unsigned, cudaStream_t, const void*, void*, std::uint64_t, std::uint64_t,
                                  const std::uint32_t*, const std::uint32_t*, int, const std::uint32_t*);

namespace {

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    throw Error(std::string("CUDA: ") + what + " failed: " + cudaGetErrorString(err) + " (" + cudaGetErrorName(err) +
                ")");
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

GpuDeviceInfo describe_device(int dev) {
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
  GpuDeviceInfo info;
  info.index = static_cast<unsigned>(dev);
  info.name = prop.name;
  info.type = "gpu";
  info.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  info.compute_units = static_cast<unsigned>(prop.multiProcessorCount);
  return info;
}

std::vector<GpuDeviceInfo> list_devices() {
  cudaError_t why = cudaSuccess;
  const int count = device_count(&why);
  std::vector<GpuDeviceInfo> list;
  for (int dev = 0; dev < count; ++dev) list.push_back(describe_device(dev));
  return list;
}

std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

// "runtime 13.0, driver 12.8" ("driver none" without a driver).
std::string versions() {
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

CudaLaunchFn launcher(Kernel kernel) {
  switch (kernel) {
    case Kernel::ecb_encrypt: return launch_ecb_encrypt;
    case Kernel::ecb_decrypt: return launch_ecb_decrypt;
    case Kernel::cbc_decrypt: return launch_cbc_decrypt;
    case Kernel::cfb128_decrypt: return launch_cfb128_decrypt;
    case Kernel::ctr: break;
  }
  return launch_ctr;
}

// How kernels are launched on the device.
struct Geometry {
  unsigned threads_per_block = 256;
  unsigned blocks_per_thread = 8;

  unsigned grid(std::size_t bytes) const {
    const std::size_t blocks = (bytes + kBlockLen - 1) / kBlockLen;
    const std::size_t threads = (blocks + blocks_per_thread - 1) / blocks_per_thread;
    return static_cast<unsigned>(
        std::clamp<std::size_t>((threads + threads_per_block - 1) / threads_per_block, 1,
                                std::numeric_limits<int>::max()));
  }
};

// Makes `device` current on the calling thread.
void use_device(int device) { check(cudaSetDevice(device), "cudaSetDevice"); }

class CudaLane final : public Lane {
 public:
  CudaLane(int device, const Geometry& geometry, const std::uint32_t* tables, std::size_t batch_bytes, bool profile)
      : device_(device), geometry_(geometry), tables_(tables), batch_bytes_(batch_bytes), profile_(profile) {
    try {  // no destructor runs for a constructor that throws: release here
      use_device(device_);
      // Non-blocking: no implicit synchronisation with the legacy default
      // stream, so nothing else in the process serialises the batches.
      check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
      // wait() blocks on this event rather than on the stream: an event made
      // with cudaEventBlockingSync puts the waiting thread to sleep until the
      // device is done, whatever the device's schedule flags are (they can't
      // be set once its context is active, and another part of the process
      // may have made it so), where cudaStreamSynchronize may spin a core.
      check(cudaEventCreateWithFlags(&done_, cudaEventBlockingSync | cudaEventDisableTiming), "cudaEventCreate");
      void* host = nullptr;
      check(cudaHostAlloc(&host, batch_bytes, cudaHostAllocDefault), "cudaHostAlloc");
      host_ = static_cast<std::uint8_t*>(host);
      check(cudaMalloc(&dev_in_, batch_bytes), "cudaMalloc (input)");
      check(cudaMalloc(&dev_out_, batch_bytes), "cudaMalloc (output)");
      if (profile) {
        for (cudaEvent_t& e : events_) check(cudaEventCreate(&e), "cudaEventCreate");
      }
    } catch (...) {
      release();
      throw;
    }
  }
  ~CudaLane() override { release(); }
  CudaLane(const CudaLane&) = delete;
  CudaLane& operator=(const CudaLane&) = delete;

  std::uint8_t* host_buffer() override { return host_; }
  std::size_t batch_bytes() const override { return batch_bytes_; }

  // Kept on the host: they travel with each launch as a kernel parameter.
  void set_keys(const RoundKeys& keys) override { keys_ = keys; }

  void enqueue(const Launch& launch, const std::uint8_t* from, std::uint8_t* to) override {
    const std::size_t n = launch.bytes;
    // The runtime need not bound a copy by the device allocation it writes:
    // a longer batch could overrun dev_in_ into other memory.
    if (n > batch_bytes_) {
      throw Error("CUDA: a batch of " + std::to_string(n) + " bytes exceeds the lane's " + std::to_string(batch_bytes_));
    }
    use_device(device_);
    if (profile_) check(cudaEventRecord(events_[0], stream_), "cudaEventRecord");
    check(cudaMemcpyAsync(dev_in_, from, n, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync (host to device)");
    if (profile_) check(cudaEventRecord(events_[1], stream_), "cudaEventRecord");
    check(launcher(launch.kernel)(geometry_.grid(n), geometry_.threads_per_block, stream_, dev_in_, dev_out_, n,
                                  launch.first_block, launch.state.data(), keys_.words.data(), keys_.rounds, tables_),
          "kernel launch");
    if (profile_) check(cudaEventRecord(events_[2], stream_), "cudaEventRecord");
    check(cudaMemcpyAsync(to, dev_out_, n, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync (device to host)");
    if (profile_) check(cudaEventRecord(events_[3], stream_), "cudaEventRecord");
    check(cudaEventRecord(done_, stream_), "cudaEventRecord");
  }

  LaneTimes wait() override {
    use_device(device_);
    // Also returns the error of a copy or kernel of the batch that failed.
    check(cudaEventSynchronize(done_), "cudaEventSynchronize");
    LaneTimes times;
    if (profile_) {
      std::array<float, 3> ms{};
      for (std::size_t i = 0; i < ms.size(); ++i) {
        check(cudaEventElapsedTime(&ms[i], events_[i], events_[i + 1]), "cudaEventElapsedTime");
      }
      times = {ms[0] * 1e-3, ms[1] * 1e-3, ms[2] * 1e-3};
    }
    return times;
  }

  void drain_quietly() noexcept override {
    (void)cudaSetDevice(device_);
    if (stream_ != nullptr) {
      // Recorded again rather than waited for as it is: an enqueue() that
      // failed part way (say, at the launch) left its upload on the stream
      // after the event's last record, still reading the caller's memory.
      if (done_ != nullptr && cudaEventRecord(done_, stream_) == cudaSuccess) {
        (void)cudaEventSynchronize(done_);
      } else {
        (void)cudaStreamSynchronize(stream_);
      }
    }
    (void)cudaGetLastError();
  }

 private:
  // Frees what was made, ignoring errors: after a kernel fault the context
  // is gone and every call fails, but the process must go on.
  void release() noexcept {
    drain_quietly();
    for (cudaEvent_t e : events_) {
      if (e != nullptr) (void)cudaEventDestroy(e);
    }
    if (dev_out_ != nullptr) (void)cudaFree(dev_out_);
    if (dev_in_ != nullptr) (void)cudaFree(dev_in_);
    if (host_ != nullptr) (void)cudaFreeHost(host_);
    if (done_ != nullptr) (void)cudaEventDestroy(done_);
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
    (void)cudaGetLastError();
  }

  const int device_;
  const Geometry geometry_;
  const std::uint32_t* const tables_;
  const std::size_t batch_bytes_;
  const bool profile_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t done_ = nullptr;
  std::uint8_t* host_ = nullptr;  // cudaHostAlloc: page-locked, so copies are async DMA
  void* dev_in_ = nullptr;
  void* dev_out_ = nullptr;
  // With profiling: before the upload, after it, after the kernel, after the download.
  std::array<cudaEvent_t, 4> events_{};
  RoundKeys keys_;  // wiped on destruction
};

class CudaDevice final : public Device {
 public:
  CudaDevice(int device, GpuDeviceInfo info, const Geometry& geometry)
      : device_(device), info_(std::move(info)), geometry_(geometry) {
    use_device(device_);
    const auto& image = aes_tables().image;
    void* tables = nullptr;
    check(cudaMalloc(&tables, sizeof(image)), "cudaMalloc (tables)");
    tables_ = static_cast<std::uint32_t*>(tables);
    cudaStream_t stream = nullptr;
    try {  // no destructor runs for a constructor that throws: free here
      // On a stream of its own, waited for: the lanes' streams are
      // non-blocking and would not wait for the legacy default stream.
      check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
      check(cudaMemcpyAsync(tables_, image.data(), sizeof(image), cudaMemcpyHostToDevice, stream),
            "cudaMemcpyAsync (tables)");
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (tables)");
      (void)cudaStreamDestroy(stream);
    } catch (...) {
      if (stream != nullptr) (void)cudaStreamDestroy(stream);
      (void)cudaFree(tables_);
      throw;
    }
  }
  ~CudaDevice() override {
    (void)cudaSetDevice(device_);
    (void)cudaFree(tables_);
    (void)cudaGetLastError();
  }
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  std::string label() const override { return "CUDA device " + std::to_string(info_.index) + " (" + info_.name + ")"; }

  std::unique_ptr<Lane> open_lane(std::size_t batch_bytes, bool profile) override {
    return std::make_unique<CudaLane>(device_, geometry_, tables_, batch_bytes, profile);
  }

  void* allocate_pinned(std::size_t bytes) override {
    (void)cudaSetDevice(device_);
    void* data = nullptr;
    if (cudaHostAlloc(&data, bytes, cudaHostAllocDefault) != cudaSuccess) {
      (void)cudaGetLastError();  // not sticky: clear it for later calls
      return nullptr;            // the caller stages through a lane instead
    }
    return data;
  }
  void free_pinned(void* data) noexcept override {
    (void)cudaSetDevice(device_);
    (void)cudaFreeHost(data);
    (void)cudaGetLastError();
  }

  // cudaHostRegister: pinned memory is mapped for the device's DMA engines,
  // so cudaMemcpyAsync copies it at the link's rate without a bounce buffer.
  // It fails with cudaErrorHostMemoryAlreadyRegistered for memory that
  // overlaps a registration at all (cudaHostAlloc memory, the caller's own,
  // an earlier pin), not only memory wholly inside one, and a copy spanning
  // registered and unregistered memory fails: such memory is refused, and
  // staged.
  bool pin_host(const void* data, std::size_t len) override {
    use_device(device_);
    // The runtime takes a non-const pointer; the device only reads the input.
    if (cudaHostRegister(const_cast<void*>(data), len, cudaHostRegisterDefault) == cudaSuccess) return true;
    (void)cudaGetLastError();  // not sticky: clear it for later calls
    return false;
  }
  void unpin_host(const void* data) noexcept override {
    (void)cudaSetDevice(device_);
    (void)cudaHostUnregister(const_cast<void*>(data));
    (void)cudaGetLastError();
  }

  LinkRates measure_link(std::size_t bytes, unsigned repeats) override {
    use_device(device_);
    Scratch up(bytes), down(bytes);
    const auto rate = [&](float ms) { return ms > 0 ? static_cast<double>(bytes) / (ms * 1e-3) : 0.0; };
    LinkRates best;
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

  double kernel_seconds(const Launch& launch, const RoundKeys& keys, unsigned repeats) override {
    use_device(device_);
    Scratch buffers(launch.bytes, false);
    double best = 0;
    for (unsigned r = 0; r < repeats; ++r) {
      const float ms = buffers.time([&] {
        check(launcher(launch.kernel)(geometry_.grid(launch.bytes), geometry_.threads_per_block, buffers.stream,
                                      buffers.dev_in, buffers.dev_out, launch.bytes, launch.first_block,
                                      launch.state.data(), keys.words.data(), keys.rounds, tables_),
              "kernel launch");
      });
      const double seconds = ms * 1e-3;
      if (r == 0 || seconds < best) best = seconds;
    }
    return best;
  }

 private:
  // Buffers and a stream of a measurement's own, freed with it; page-locked
  // host memory only `with_host` (the link's, not the kernel's).
  struct Scratch {
    explicit Scratch(std::size_t n, bool with_host = true) : bytes(n) {
      try {
        check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
        // Blocking: record_end() sleeps until the copy or kernel is done.
        check(cudaEventCreateWithFlags(&start, cudaEventBlockingSync), "cudaEventCreate");
        check(cudaEventCreateWithFlags(&end, cudaEventBlockingSync), "cudaEventCreate");
        if (with_host) check(cudaHostAlloc(&host, n, cudaHostAllocDefault), "cudaHostAlloc");
        check(cudaMalloc(&dev_in, n), "cudaMalloc");
        check(cudaMalloc(&dev_out, n), "cudaMalloc");
        check(cudaMemsetAsync(dev_in, 0x5a, n, stream), "cudaMemsetAsync");
        check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
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
      (void)cudaGetLastError();
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

  int device_ = 0;
  GpuDeviceInfo info_;
  Geometry geometry_;
  std::uint32_t* tables_ = nullptr;  // device copy of the table image
};

std::unique_ptr<Device> open_cuda_device(std::optional<unsigned> index, const GpuGeometry& requested) {
  Geometry geometry;
  if (requested.group_size != 0) {
    if (requested.group_size % 32 != 0 || requested.group_size > 1024) {
      throw usage_error("CUDA: threads per block must be a multiple of 32 from 32 to 1024, got " +
                        std::to_string(requested.group_size));
    }
    geometry.threads_per_block = requested.group_size;
  }
  if (requested.blocks_per_item != 0) geometry.blocks_per_thread = requested.blocks_per_item;
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
  const unsigned chosen = index.value_or(0);
  if (chosen >= static_cast<unsigned>(count)) throw no_such_device("CUDA", chosen, static_cast<std::size_t>(count));
  const int device = static_cast<int>(chosen);
  return std::make_unique<CudaDevice>(device, describe_device(device), geometry);
}

}  // namespace

}  // namespace paes::gpu

namespace paes {
namespace {

// CUDA's stack without starting its driver (cuInit): the variables that
// steer it, NVIDIA's device nodes, and the kernel driver's version and GPUs.
std::string stack_facts() {
  std::string facts;
  for (const char* var : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"}) add_variable(facts, var);
  for (const std::string& name : names_in("/dev", [](std::string_view n) { return n.starts_with("nvidia"); })) {
    add_node(facts, std::filesystem::path("/dev") / name);
  }
  add_contents(facts, "/proc/driver/nvidia/version");
  for (const std::string& gpu : names_in("/proc/driver/nvidia/gpus", [](std::string_view) { return true; })) {
    facts += "nvidia gpu " + gpu + '\n';
  }
  return facts;
}

}  // namespace

GpuApi cuda_api() {
  GpuApi api;
  api.name = "cuda";
  api.label = "CUDA";
  api.list_devices = gpu::list_devices;
  api.versions = gpu::versions;
  api.open = gpu::open_cuda_device;
  api.stack_facts = stack_facts;
  return api;
}

}  // namespace paes
