// run_transform: the raw modes' front door. It resolves the key (given, or
// derived from a passphrase with openssl's Salted__ header and PBKDF2), reads
// or writes that header, and hands the message to the engine as a ChunkPlan.
#include "paes/transform.hpp"

#include "api/job_runner.hpp"
#include "cipher/kdf.hpp"
#include "format/salted_header.hpp"
#include "paes/endpoint.hpp"
#include "paes/error.hpp"
#include "paes/io.hpp"

namespace paes {
namespace {

// Refuses impossible lengths (no-pad, truncated ECB/CBC) before an output exists.
void check_input_len(const ChunkPlan& plan, const InputEndpoint& in, std::uint64_t skip) {
  if (const auto size = in.size()) plan.chunk_count(*size - skip);
}

}  // namespace

TransformReport transform_file(const CipherSpec& spec, const std::string& input_path,
                               const std::string& output_path, const TransformOptions& options) {
  JobRunner runner(options);
  InputEndpoint in(input_path, spec.direction == Direction::decrypt);
  const ChunkPlan plan(spec, runner.chunk_len_for(spec.mode, options.chunk_len, in, 0));
  check_input_len(plan, in, 0);
  OutputEndpoint out(output_path, output_options(options, spec.direction, in), spec.direction == Direction::encrypt);
  TransformReport report;
  report.chunk_len = plan.chunk_len();
  runner.run(plan, in, 0, out, 0, report);
  return report;
}

TransformReport transform_salted(const CipherSpec& base, const Pbkdf2Key& pbkdf2,
                                 const std::string& input_path, const std::string& output_path,
                                 const TransformOptions& options) {
  check_key_length(pbkdf2.key_len);
  JobRunner runner(options);
  const bool encrypt = base.direction == Direction::encrypt;
  InputEndpoint in(input_path, !encrypt);
  SaltedSalt salt;
  if (encrypt) {
    random_bytes(salt);
  } else {
    std::array<std::uint8_t, kSaltedHeaderLen> header{};
    const std::size_t got = in.read_prefix(header);
    salt = decode_salted_header(std::span(header).first(got), in.name());
  }
  const CipherSpec spec = salted_cipher_spec(base, pbkdf2, salt);

  const std::uint64_t in_skip = encrypt ? 0 : kSaltedHeaderLen;
  const ChunkPlan plan(spec, runner.chunk_len_for(spec.mode, options.chunk_len, in, in_skip));
  check_input_len(plan, in, in_skip);
  OutputEndpoint out(output_path, output_options(options, base.direction, in), encrypt);
  if (encrypt) out.write_prefix(encode_salted_header(salt));
  TransformReport report;
  report.chunk_len = plan.chunk_len();
  runner.run(plan, in, in_skip, out, encrypt ? kSaltedHeaderLen : 0, report);
  return report;
}

std::uint64_t transform_memory(const CipherSpec& spec, std::span<std::uint8_t> out,
                               std::span<const std::uint8_t> in, const TransformOptions& options) {
  const ChunkPlan plan(spec, chunk_len_for(spec.mode, options.chunk_len, options.engine, options.threads, in.size()));
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
