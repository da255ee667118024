// open_gpu_probe: a GPU backend of its own (its own device, lanes, batch and
// launch geometry) for `paes bench`, apart from the table's rows.
#include <memory>
#include <string>

#include "cipher/backend.hpp"
#include "cipher/gpu/gpu_backend.hpp"
#include "paes/backend.hpp"
#include "paes/engine.hpp"
#include "paes/error.hpp"
#include "paes/plan.hpp"

namespace paes {
namespace {

class BackendProbe final : public GpuProbe {
 public:
  BackendProbe(const GpuApi& api, std::optional<unsigned> device, std::size_t batch_bytes, const GpuGeometry& geometry)
      : backend_(api, device, batch_bytes, geometry, /*profile=*/true) {
    backend_.start();  // opened and self-tested now, not in the first timing
  }

  std::string device() const override { return backend_.detail(); }

  LinkRates measure_link(std::size_t bytes, unsigned repeats) override {
    const gpu::LinkRates rates = backend_.measure_link(bytes, repeats);
    return {rates.up, rates.down, rates.both};
  }

  double kernel_only_seconds(const CipherSpec& spec, std::size_t bytes, unsigned repeats) override {
    return backend_.kernel_seconds(spec, bytes, repeats);
  }

  std::uint64_t transform(const CipherSpec& spec, std::span<std::uint8_t> out, std::span<const std::uint8_t> in,
                          unsigned threads) override {
    const ChunkPlan plan(spec, ChunkPlan::kAutoChunkLen, backend_);
    MemorySource source(in);
    MemorySink sink(out);
    return make_engine(EngineKind::threads, threads)->run(plan, source, sink);
  }

  PinnedMemory pin_memory(const void* data, std::size_t len) override { return backend_.pin(data, len); }

 private:
  GpuCipherBackend backend_;
};

}  // namespace

std::unique_ptr<GpuProbe> open_gpu_probe(std::string_view name, std::optional<unsigned> device,
                                         std::size_t batch_bytes, const GpuGeometry& geometry) {
  const std::optional<GpuApi> api = find_gpu_api(name);
  if (!api) throw usage_error("cipher backend " + std::string(name) + " is no GPU backend of this build");
  return std::make_unique<BackendProbe>(*api, device, batch_bytes, geometry);
}

}  // namespace paes
