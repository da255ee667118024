// Who runs a plan's chunks. An engine knows nothing of modes' math: it asks the
// plan for chunks and their start states and a ChunkCipher for the bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "paes/io.hpp"
#include "paes/mode.hpp"
#include "paes/plan.hpp"

namespace paes {

enum class EngineKind { serial, threads };

std::string_view engine_name(EngineKind kind);
std::optional<EngineKind> parse_engine(std::string_view name);
// The engines this build contains, in the order `paes info` lists them.
std::string_view compiled_engines();

class Engine {
 public:
  virtual ~Engine() = default;
  virtual EngineKind kind() const = 0;
  // Workers that run cipher work for this plan (1 for sequential plans).
  virtual unsigned workers_for(const ChunkPlan& plan) const = 0;
  // Transforms the whole input into `out` as the plan says and returns the
  // output length. Throws Error on the first failure of any chunk; `out` may
  // then hold partial data, which the caller must discard.
  virtual std::uint64_t run(const CipherSpec& spec, const ChunkPlan& plan, Source& in,
                            Sink& out) = 0;
};

// threads = 0 means one per online CPU. The serial engine ignores it.
std::unique_ptr<Engine> make_engine(EngineKind kind, unsigned threads = 0);

unsigned online_cpus();

}  // namespace paes
