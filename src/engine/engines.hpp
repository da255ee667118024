// The concrete engines; callers reach them through make_engine().
#pragma once

#include "paes/engine.hpp"

namespace paes {

class SerialEngine final : public Engine {
 public:
  EngineKind kind() const override { return EngineKind::serial; }
  unsigned workers_for(const ChunkPlan&) const override { return 1; }
  std::uint64_t run(const CipherSpec& spec, const ChunkPlan& plan, Source& in,
                    Sink& out) override;
};

class ThreadsEngine final : public Engine {
 public:
  explicit ThreadsEngine(unsigned threads) : threads_(threads) {}
  EngineKind kind() const override { return EngineKind::threads; }
  unsigned workers_for(const ChunkPlan& plan) const override;
  std::uint64_t run(const CipherSpec& spec, const ChunkPlan& plan, Source& in,
                    Sink& out) override;

 private:
  unsigned threads_;
};

}  // namespace paes
