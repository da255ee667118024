#include "engine/gpu/cuda_engine.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

#include "engine/gpu/gpu_check.hpp"
#include "gpu/aes_tables.hpp"
#include "gpu/device_piece.hpp"
#include "gpu/gpu_modes.hpp"
#include "gpu/key_schedule.hpp"
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

std::array<std::uint32_t, 4> block_words(const Block& b) {
  std::array<std::uint32_t, 4> w{};
  for (std::size_t i = 0; i < 4; ++i) {
    w[i] = (std::uint32_t{b[4 * i]} << 24) | (std::uint32_t{b[4 * i + 1]} << 16) |
           (std::uint32_t{b[4 * i + 2]} << 8) | std::uint32_t{b[4 * i + 3]};
  }
  return w;
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

// One of the batches in flight: its stream, a pinned host buffer (input staged
// in, output read back into the same place) and its device buffers.
struct CudaSlot {
  cudaStream_t stream = nullptr;
  std::uint8_t* host = nullptr;  // cudaHostAlloc: page-locked, so copies are async DMA
  void* dev_in = nullptr;
  void* dev_out = nullptr;
  // With profiling: before the upload, after it, after the kernel, after the
  // download.
  std::array<cudaEvent_t, 4> events{};
  // Where the batch's output goes once the download is complete (null: idle).
  std::uint8_t* pending_out = nullptr;
  std::size_t pending_len = 0;
  gpu::BatchSample sample;  // the blocks of the batch checked on the CPU
};

struct CudaEngine::Impl {
  CudaOptions options;
  CudaDeviceInfo info;
  int device = 0;
  std::uint32_t* tables = nullptr;  // device copy of the table image
  std::vector<CudaSlot> slots;
  std::size_t batch_bytes = 0;
  Stats stats;
  gpu::BatchCheck output_check{"CUDA device"};

  // The message under way (begin .. final update).
  bool begun = false;
  Mode mode = Mode::ctr;
  Direction direction = Direction::encrypt;
  bool padded = false;
  gpu::RoundKeys round_keys;  // wiped on destruction
  gpu::CudaLaunchFn launch_fn = gpu::launch_ctr;
  std::array<std::uint32_t, 4> counter0{};  // CTR: counter block of the chunk's first block
  Block chain{};                  // CBC/CFB: ciphertext block before the next piece
  std::uint64_t blocks_done = 0;  // CTR: blocks of the chunk already transformed

  ~Impl();
  void use_device() const { check(cudaSetDevice(device), "cudaSetDevice"); }
  void finish(CudaSlot& slot);
  void launch(CudaSlot& slot, std::size_t n, std::uint64_t first_block,
              const std::array<std::uint32_t, 4>& state);
  void drain_all_quietly() noexcept;
};

// Releases what was allocated, ignoring errors: after a kernel fault the
// context is gone and every call fails, but the process must go on.
CudaEngine::Impl::~Impl() {
  if (slots.empty() && tables == nullptr) return;
  (void)cudaSetDevice(device);
  drain_all_quietly();
  for (CudaSlot& s : slots) {
    for (cudaEvent_t e : s.events) {
      if (e != nullptr) (void)cudaEventDestroy(e);
    }
    if (s.dev_in != nullptr) (void)cudaFree(s.dev_in);
    if (s.dev_out != nullptr) (void)cudaFree(s.dev_out);
    if (s.host != nullptr) (void)cudaFreeHost(s.host);
    if (s.stream != nullptr) (void)cudaStreamDestroy(s.stream);
  }
  if (tables != nullptr) (void)cudaFree(tables);
  (void)cudaGetLastError();
}

CudaEngine::CudaEngine(const CudaOptions& options) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.options = options;
  if (options.threads_per_block == 0 || options.threads_per_block % 32 != 0 ||
      options.threads_per_block > 1024) {
    throw usage_error("CUDA: threads per block must be a multiple of 32 from 32 to 1024, got " +
                      std::to_string(options.threads_per_block));
  }
  m.options.streams = std::max(2u, options.streams);
  m.options.blocks_per_thread = std::max(1u, options.blocks_per_thread);

  cudaError_t why = cudaSuccess;
  const int count = device_count(&why);
  if (why != cudaSuccess) {
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0) {
      (void)cudaGetLastError();
      throw Error("CUDA: no CUDA device (no NVIDIA driver is installed)");
    }
    throw Error(std::string("CUDA: no CUDA device available (cudaGetDeviceCount: ") +
                cudaGetErrorString(why) + ")");
  }
  if (count == 0) throw Error("CUDA: no CUDA device found");
  const unsigned index = options.device_index.value_or(0);
  if (index >= static_cast<unsigned>(count)) {
    throw usage_error("--device " + std::to_string(index) + ": there are only " +
                      std::to_string(count) + " CUDA devices (see paes info)");
  }
  m.device = static_cast<int>(index);
  m.info = describe_device(m.device);
  const std::string label = "CUDA device " + std::to_string(index) + " (" + m.info.name + ")";
  m.output_check = gpu::BatchCheck(label);
  m.use_device();

  const auto& image = gpu::aes_tables().image;
  void* tables = nullptr;
  check(cudaMalloc(&tables, sizeof(image)), "cudaMalloc (tables)");
  m.tables = static_cast<std::uint32_t*>(tables);
  check(cudaMemcpy(m.tables, image.data(), sizeof(image), cudaMemcpyHostToDevice),
        "cudaMemcpy (tables)");

  m.batch_bytes = std::max<std::size_t>(kBlockLen, options.batch_bytes / kBlockLen * kBlockLen);
  m.slots.resize(m.options.streams);
  for (CudaSlot& s : m.slots) {
    // Non-blocking: no implicit synchronisation with the legacy default
    // stream, so nothing else in the process serialises the batches.
    check(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    void* host = nullptr;
    check(cudaHostAlloc(&host, m.batch_bytes, cudaHostAllocDefault), "cudaHostAlloc");
    s.host = static_cast<std::uint8_t*>(host);
    check(cudaMalloc(&s.dev_in, m.batch_bytes), "cudaMalloc (input)");
    check(cudaMalloc(&s.dev_out, m.batch_bytes), "cudaMalloc (output)");
    if (options.profile) {
      for (cudaEvent_t& e : s.events) check(cudaEventCreate(&e), "cudaEventCreate");
    }
  }
  gpu::run_self_test(
      [this](const CipherSpec& spec, std::uint8_t* out, const std::uint8_t* in, std::size_t len) {
        return transform(spec, out, in, len);
      },
      label);
  reset_stats();  // the self-test is not the caller's work
}

CudaEngine::~CudaEngine() = default;

const CudaDeviceInfo& CudaEngine::device() const { return impl_->info; }
const CudaEngine::Stats& CudaEngine::stats() const { return impl_->stats; }
void CudaEngine::reset_stats() { impl_->stats = {}; }

bool CudaEngine::supports(const CipherSpec& spec) { return gpu::runs_on_gpu(spec); }

void CudaEngine::begin(const CipherSpec& spec, const Block& start_state) {
  Impl& m = *impl_;
  if (!supports(spec)) {
    throw usage_error(std::string("the cuda engine runs ECB, CTR and CBC/CFB decryption; ") +
                      std::string(mode_name(spec.mode)) + " " +
                      std::string(direction_name(spec.direction)) +
                      " is not among them (sequential directions run on the CPU)");
  }
  check_key_length(spec.key.size());
  m.use_device();
  m.drain_all_quietly();
  m.begun = false;
  m.mode = spec.mode;
  m.direction = spec.direction;
  m.padded = spec.padded();
  const bool decrypt_kernel = spec.direction == Direction::decrypt &&
                              (spec.mode == Mode::ecb || spec.mode == Mode::cbc);
  m.round_keys = decrypt_kernel ? gpu::expand_decrypt_key(spec.key.data(), spec.key.size())
                                : gpu::expand_encrypt_key(spec.key.data(), spec.key.size());
  switch (spec.mode) {
    case Mode::ecb:
      m.launch_fn = spec.direction == Direction::encrypt ? gpu::launch_ecb_encrypt
                                                         : gpu::launch_ecb_decrypt;
      break;
    case Mode::cbc:
      m.launch_fn = gpu::launch_cbc_decrypt;
      break;
    case Mode::cfb128:
      m.launch_fn = gpu::launch_cfb128_decrypt;
      break;
    default:
      m.launch_fn = gpu::launch_ctr;
      break;
  }
  m.counter0 = block_words(start_state);
  m.chain = start_state;
  m.blocks_done = 0;
  m.output_check.begin(spec, start_state);
  m.begun = true;
}

void CudaEngine::Impl::drain_all_quietly() noexcept {
  for (CudaSlot& s : slots) {
    if (s.stream != nullptr) (void)cudaStreamSynchronize(s.stream);
    s.pending_out = nullptr;
    s.pending_len = 0;
  }
}

// Waits for the slot's batch, if any, and copies its output to the caller.
void CudaEngine::Impl::finish(CudaSlot& slot) {
  if (slot.pending_out == nullptr) return;
  check(cudaStreamSynchronize(slot.stream), "cudaStreamSynchronize");
  output_check.verify(slot.sample, slot.host);
  stats.checked_batches += 1;
  std::memcpy(slot.pending_out, slot.host, slot.pending_len);
  if (options.profile) {
    float ms[3] = {};
    for (std::size_t i = 0; i < 3; ++i) {
      check(cudaEventElapsedTime(&ms[i], slot.events[i], slot.events[i + 1]),
            "cudaEventElapsedTime");
    }
    stats.write_seconds += ms[0] * 1e-3;
    stats.kernel_seconds += ms[1] * 1e-3;
    stats.read_seconds += ms[2] * 1e-3;
  }
  slot.pending_out = nullptr;
  slot.pending_len = 0;
}

// Enqueues upload, kernel and download of the n bytes staged in slot.host.
void CudaEngine::Impl::launch(CudaSlot& slot, std::size_t n, std::uint64_t first_block,
                              const std::array<std::uint32_t, 4>& state) {
  const bool timed = options.profile;
  if (timed) check(cudaEventRecord(slot.events[0], slot.stream), "cudaEventRecord");
  check(cudaMemcpyAsync(slot.dev_in, slot.host, n, cudaMemcpyHostToDevice, slot.stream),
        "cudaMemcpyAsync (host to device)");
  if (timed) check(cudaEventRecord(slot.events[1], slot.stream), "cudaEventRecord");

  const std::size_t blocks = (n + kBlockLen - 1) / kBlockLen;
  const std::size_t per_thread = options.blocks_per_thread;
  const std::size_t tpb = options.threads_per_block;
  const std::size_t threads = (blocks + per_thread - 1) / per_thread;
  const std::size_t grid = std::clamp<std::size_t>((threads + tpb - 1) / tpb, 1,
                                                   std::numeric_limits<int>::max());
  check(launch_fn(static_cast<unsigned>(grid), static_cast<unsigned>(tpb), slot.stream,
                  slot.dev_in, slot.dev_out, n, first_block, state.data(),
                  round_keys.words.data(), round_keys.rounds, tables),
        "kernel launch");
  if (timed) check(cudaEventRecord(slot.events[2], slot.stream), "cudaEventRecord");

  check(cudaMemcpyAsync(slot.host, slot.dev_out, n, cudaMemcpyDeviceToHost, slot.stream),
        "cudaMemcpyAsync (device to host)");
  if (timed) check(cudaEventRecord(slot.events[3], slot.stream), "cudaEventRecord");
  stats.bytes += n;
  stats.batches += 1;
}

std::size_t CudaEngine::update(std::uint8_t* out, const std::uint8_t* in, std::size_t len,
                               bool final) {
  Impl& m = *impl_;
  if (!m.begun) throw Error("CUDA engine: update() before begin()");
  const gpu::DevicePiece piece(m.mode, m.direction, m.padded, in, len, final, "CUDA");
  const std::size_t device_len = piece.device_len();

  m.use_device();
  const std::size_t nslots = m.slots.size();
  try {
    std::size_t batch_index = 0;
    for (std::size_t off = 0; off < device_len; off += m.batch_bytes, ++batch_index) {
      CudaSlot& slot = m.slots[batch_index % nslots];
      m.finish(slot);  // the batch that used this slot `nslots` batches ago
      const std::size_t n = std::min(m.batch_bytes, device_len - off);
      piece.stage(slot.host, off, n);

      std::array<std::uint32_t, 4> state{};
      if (m.mode == Mode::ctr) state = m.counter0;
      if (m.mode == Mode::cbc || m.mode == Mode::cfb128) state = block_words(m.chain);
      const std::uint64_t first_block = m.blocks_done + off / kBlockLen;
      slot.sample = m.output_check.sample(slot.host, n, first_block, m.chain);
      // The next batch chains from this one's last ciphertext block, taken from
      // the staged copy (with out == in, `in` may be overwritten before the
      // next batch is staged) and before the download overwrites it.
      if (n >= kBlockLen) std::memcpy(m.chain.data(), slot.host + n - kBlockLen, kBlockLen);
      m.launch(slot, n, first_block, state);
      slot.pending_out = out + off;
      slot.pending_len = n;
    }
    // Oldest first, so each copy-out overlaps the batches still running.
    for (std::size_t i = 0; i < nslots; ++i) m.finish(m.slots[(batch_index + i) % nslots]);
  } catch (...) {
    m.drain_all_quietly();
    throw;
  }
  m.blocks_done += device_len / kBlockLen;

  if (final) m.begun = false;
  return piece.output_len(out);
}

std::size_t CudaEngine::transform(const CipherSpec& spec, std::uint8_t* out,
                                  const std::uint8_t* in, std::size_t len) {
  begin(spec, spec.iv);
  return update(out, in, len, true);
}

}  // namespace paes
