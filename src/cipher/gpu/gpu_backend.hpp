// A GPU as a cipher backend: the parallel raw directions (ECB both ways, CTR
// both ways, CBC and CFB128 decryption) on a device, through the same seam as
// OpenSSL and ipsec-mb (cipher/backend.hpp). The engines' own workers drive
// it: each worker's RawCipher holds one lane of the device (its queue or
// stream, page-locked buffer and device buffers), taken from the backend's
// pool and given back when the worker goes, so lanes are opened once per
// process and reused. ChunkPlan gives every chunk its start state, padding
// stays in cipher/padding.cpp and a stream's end in engine/feed.cpp: the
// backend only runs blocks.
//
// What differs between GPU APIs is a GpuApi (below): its name, its devices,
// its versions and how to open one. Each API's folder beside cipher/gpu/
// makes one, and cipher/backends.cpp holds a GpuCipherBackend
// over it as a row of its table: the API's default device, whose on_device()
// gives the backend of each other device.
//
// The device is opened at the first worker that needs it, with its AES
// self-test (gpu_check.hpp): a device that fails it is never used, and the
// job that asked fails with the reason. Every batch's output is checked on
// the CPU at three blocks (gpu_check.hpp) before the worker returns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <map>
#include <string_view>
#include <vector>

#include "cipher/backend.hpp"
#include "cipher/gpu/device.hpp"
#include "paes/backend.hpp"

namespace paes {

// One GPU API: what its folder gives the backend.
struct GpuApi {
  std::string_view name;   // the backend's name (--backend), in lower case
  std::string_view label;  // the API's own spelling, in messages
  // Every device, as `paes info` lists them (index: --device); empty where
  // there is no driver or device. Throws Error only on a failing call past that.
  std::function<std::vector<GpuDeviceInfo>()> list_devices;
  // What `paes info` says of the API beside its devices ("runtime 13.0,
  // driver 12.8"); may be empty.
  std::function<std::string()> versions;
  // Opens device `index` (unset: the API's default), its kernels ready.
  // Throws a usage Error for an index that doesn't exist, Error otherwise.
  std::function<std::unique_ptr<gpu::Device>(std::optional<unsigned> index, const GpuGeometry& geometry)> open;
  // What can be known of the API's stack without starting its driver (its
  // device nodes, driver files, ICDs, the variables that steer it), for
  // auto's fingerprint of the GPU stack (util/stack_facts.hpp).
  std::function<std::string()> stack_facts;
};

// The GPU APIs this build has, in the order of cipher/backends.cpp's table,
// and the one of a backend's name (none where that is no GPU of this build).
std::vector<GpuApi> gpu_apis();
std::optional<GpuApi> find_gpu_api(std::string_view name);

class GpuCipherBackend final : public CipherBackend {
 public:
  // The bytes of one launch, and so the chunk length a GPU asks its jobs for:
  // large enough that a launch and its two copies cost far more than starting
  // them, small enough that every worker of a 16-core machine holds one
  // (16 lanes of 8 MiB in flight) within the engines' in-flight bound.
  static constexpr std::size_t kDefaultBatchBytes = std::size_t{8} << 20;

  // `api`'s device `device` (unset: the API's default), opened at first use,
  // in batches of `batch_bytes` (at most what the device takes), launched
  // with `geometry`, timing its lanes where `profile` (stats()). The table's
  // row is the default device's; GpuProbe makes one of its own.
  explicit GpuCipherBackend(GpuApi api, std::optional<unsigned> device = std::nullopt,
                            std::size_t batch_bytes = kDefaultBatchBytes, const GpuGeometry& geometry = {},
                            bool profile = false);
  // Over a device already open (tests: the host adapter, the model device),
  // self-tested here. `name` names the backend.
  GpuCipherBackend(std::string name, std::unique_ptr<gpu::Device> device, std::size_t batch_bytes);
  ~GpuCipherBackend() override;

  std::string_view name() const override { return name_; }
  // Built in and at least one device is listed.
  bool available() const override;
  bool runs(Mode mode, Direction direction) const override;
  // Never by the table's rule: auto sends work to a GPU only where it was
  // measured faster (api/auto_backend.hpp).
  bool chosen_by_auto() const override { return false; }
  std::string auto_rule() const override {
    return "where it measured it faster than the CPU for a job of that size (a real GPU only)";
  }
  std::string detail() const override;
  std::string why_unavailable() const override;
  bool runs_on_device() const override { return true; }
  void* allocate_chunk_memory(std::size_t bytes) const override;
  void free_chunk_memory(void* data, std::size_t bytes) const noexcept override;

  const CipherBackend& on_device(std::optional<unsigned> index) const override;
  std::optional<unsigned> device_index() const override { return device_index_; }
  std::vector<GpuDeviceInfo> devices() const override;
  std::string versions() const override;
  void start() const override { device(); }
  PinnedMemory pin(const void* data, std::size_t len) const override;

  // Opens the device now, if it isn't, and self-tests it (start()). Throws
  // what opening throws.
  gpu::Device& device() const;

  // The seconds the backend's lanes spent in kernels, uploads and downloads,
  // with profiling on (made with `profile`, as GpuProbe makes its own).
  struct Stats {
    std::uint64_t batches = 0;
    std::uint64_t bytes = 0;
    std::uint64_t direct_batches = 0;  // from and into page-locked memory, no staging copy
    double upload_seconds = 0;
    double kernel_seconds = 0;
    double download_seconds = 0;
  };
  Stats stats() const;
  void reset_stats();

  // For benchmarks (GpuProbe): the device's page-locked link, and the kernel
  // of `spec` alone on `bytes` already on the device (by its events).
  gpu::LinkRates measure_link(std::size_t bytes, unsigned repeats) const;
  double kernel_seconds(const CipherSpec& spec, std::size_t bytes, unsigned repeats) const;

  // Whether [data, data + len) lies in page-locked memory the device copies
  // straight from: a lane's buffer, chunk memory, a pin.
  bool in_pinned(const void* data, std::size_t len) const;

  // Internal to the backend's RawCipher: a lane from the pool (opening one
  // where none is free), and back.
  std::unique_ptr<gpu::Lane> take_lane() const;
  void return_lane(std::unique_ptr<gpu::Lane> lane) const noexcept;
  void count_batch(std::size_t bytes, bool direct, const gpu::LaneTimes& times) const;

 private:
  std::unique_ptr<RawCipher> do_make_raw(const CipherSpec& spec) const override;
  std::unique_ptr<SegmentAead> do_make_segment(const SecretBytes& key, Direction direction) const override;
  void self_test() const;
  // Opens a lane and records its buffer as page-locked memory.
  std::unique_ptr<gpu::Lane> open_lane() const;

  std::string name_;
  std::optional<GpuApi> api_;
  const std::optional<unsigned> device_index_;
  const std::size_t batch_bytes_;  // asked for: a lane holds at most what the device takes
  const GpuGeometry geometry_;
  const bool profile_ = false;
  // Held while the device opens and self-tests, so that workers wait for it.
  mutable std::mutex open_mutex_;
  // Guards the rest.
  mutable std::mutex mutex_;
  mutable std::unique_ptr<gpu::Device> device_;
  mutable std::vector<std::unique_ptr<gpu::Lane>> free_lanes_;
  struct PinnedRange {
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;
  };
  mutable std::vector<PinnedRange> pinned_;
  mutable Stats stats_;
  // Pins hold it weakly: one dropped after the backend went (whose device
  // went with it) does nothing.
  std::shared_ptr<const bool> alive_ = std::make_shared<const bool>(true);
  // Every chunk buffer allocated, and those given back, kept page-locked for
  // the next job (pinning costs in proportion to the size).
  mutable std::vector<std::pair<void*, std::size_t>> chunk_memory_sizes_;
  mutable std::vector<std::pair<void*, std::size_t>> spare_chunk_memory_;
  // The row's backends of the API's other devices (on_device), made at first
  // use and kept as long as the row.
  mutable std::mutex devices_mutex_;
  mutable std::map<unsigned, std::unique_ptr<GpuCipherBackend>> on_devices_;
};

}  // namespace paes
