// The library's front door: transform a whole file or buffer with one call.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "paes/engine.hpp"
#include "paes/mode.hpp"
#include "paes/plan.hpp"

namespace paes {

struct TransformOptions {
  EngineKind engine = EngineKind::threads;
  unsigned threads = 0;  // 0: one per online CPU
  std::uint64_t chunk_len = ChunkPlan::kAutoChunkLen;  // or bytes, 16 to 1G
  bool force = false;  // overwrite an existing output
};

struct TransformReport {
  std::uint64_t bytes_in = 0;
  std::uint64_t bytes_out = 0;
  unsigned workers = 0;
  bool parallel = false;
  std::uint64_t chunk_len = 0;  // as the plan used it: rounded down to whole blocks
  double seconds = 0;  // open to commit, I/O included
};

// Encrypts or decrypts input_path into output_path. Nothing appears under
// output_path unless the whole job succeeds. Throws Error.
TransformReport transform_file(const CipherSpec& spec, const std::string& input_path,
                               const std::string& output_path, const TransformOptions& options);

// Transforms `in` into `out` (which must hold output_capacity() bytes: in.size(),
// plus 16 for padded encryption) and returns the output length.
std::uint64_t transform_memory(const CipherSpec& spec, std::span<std::uint8_t> out,
                               std::span<const std::uint8_t> in, const TransformOptions& options);

}  // namespace paes
