#include "paes/transform.hpp"

#include <chrono>

#include "paes/error.hpp"
#include "paes/io.hpp"

namespace paes {

TransformReport transform_file(const CipherSpec& spec, const std::string& input_path,
                               const std::string& output_path, const TransformOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  InputFile input(input_path);
  const ChunkPlan plan(spec, options.chunk_len);
  plan.chunk_count(input.size());  // refuse impossible lengths before creating the output
  const auto engine = make_engine(options.engine, options.threads);
  OutputFile output(output_path, options.force);

  TransformReport report;
  report.bytes_in = input.size();
  report.bytes_out = engine->run(plan, input, output);
  output.commit();
  report.workers = engine->workers_for(plan, input.size());
  report.parallel = plan.parallel();
  report.chunk_len = plan.chunk_len();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

std::uint64_t transform_memory(const CipherSpec& spec, std::span<std::uint8_t> out,
                               std::span<const std::uint8_t> in, const TransformOptions& options) {
  const ChunkPlan plan(spec, options.chunk_len);
  const std::uint64_t need = output_capacity(plan, in.size());
  if (out.size() < need) {
    throw Error("output buffer too small: " + std::to_string(out.size()) + " bytes, need " +
                std::to_string(need));
  }
  MemorySource source(in);
  MemorySink sink(out);
  return make_engine(options.engine, options.threads)->run(plan, source, sink);
}

}  // namespace paes
