// The serial engine: every chunk in order on the calling thread, no overlap of
// I/O and cipher. It is the baseline that speed-ups are measured against.
#include "engine/chunk_runner.hpp"
#include "engine/engines.hpp"

namespace paes {

std::uint64_t SerialEngine::run(const CipherSpec& spec, const ChunkPlan& plan, Source& in,
                                Sink& out) {
  ChunkCipher cipher(spec);
  std::vector<std::uint8_t> scratch;
  std::uint64_t written = 0;
  for (std::uint64_t i = 0; i < plan.chunk_count(); ++i) {
    written += run_chunk(plan, plan.chunk(i), cipher, in, out, scratch);
  }
  return written;
}

}  // namespace paes
