// run_transform: the raw modes' front door. It resolves the key (given, or
// derived from a passphrase with openssl's Salted__ header and PBKDF2), reads
// or writes that header, and hands the message to the engine as a ChunkPlan.
#include "paes/transform.hpp"

#include "api/job_runner.hpp"
#include "cipher/kdf.hpp"
#include "cipher/padding.hpp"
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

// A raw job's armor at one end: openssl enc -a's text, at the end that
// carries ciphertext (`ciphertext_end`), where asked for.
Armor raw_armor(const TransformOptions& options, bool ciphertext_end) {
  return options.armor && ciphertext_end ? Armor::openssl : Armor::none;
}

}  // namespace

TransformReport transform_file(const CipherSpec& spec, const std::string& input_path,
                               const std::string& output_path, const TransformOptions& options) {
  JobRunner runner(options);
  const bool encrypt = spec.direction == Direction::encrypt;
  InputEndpoint in(input_path, !encrypt, raw_armor(options, !encrypt));
  const ChunkPlan plan = runner.plan_for(spec, in, 0);
  check_input_len(plan, in, 0);
  OutputEndpoint out(output_path, output_options(options, spec.direction, in), encrypt, raw_armor(options, encrypt));
  TransformReport report;
  report.chunk_len = plan.chunk_len();
  report.backend = plan.backend().name;
  runner.run(plan, in, 0, out, 0, report);
  return report;
}

TransformReport transform_salted(const CipherSpec& base, const Pbkdf2Key& pbkdf2,
                                 const std::string& input_path, const std::string& output_path,
                                 const TransformOptions& options) {
  check_key_length(pbkdf2.key_len);
  JobRunner runner(options);
  const bool encrypt = base.direction == Direction::encrypt;
  InputEndpoint in(input_path, !encrypt, raw_armor(options, !encrypt));
  // openssl enc -nosalt: no header, and PBKDF2 with no salt at all; -S: no
  // header, the salt given.
  if (pbkdf2.no_salt && pbkdf2.salt) throw usage_error("a salt of one's own and no salt at all: one of them");
  const bool with_header = !pbkdf2.no_salt && !pbkdf2.salt;
  SaltedSalt salt{};
  if (pbkdf2.salt) {
    salt = *pbkdf2.salt;
  } else if (encrypt && with_header) {
    random_bytes(salt);
  } else if (with_header) {
    std::array<std::uint8_t, kSaltedHeaderLen> header{};
    const std::size_t got = in.read_prefix(header);
    salt = decode_salted_header(std::span(header).first(got), in.name());
  }
  const CipherSpec spec =
      salted_cipher_spec(base, pbkdf2, pbkdf2.no_salt ? std::span<const std::uint8_t>() : std::span<const std::uint8_t>(salt));

  const std::uint64_t in_skip = encrypt || !with_header ? 0 : kSaltedHeaderLen;
  const ChunkPlan plan = runner.plan_for(spec, in, in_skip);
  check_input_len(plan, in, in_skip);
  OutputEndpoint out(output_path, output_options(options, base.direction, in), encrypt, raw_armor(options, encrypt));
  if (encrypt && with_header) out.write_prefix(encode_salted_header(salt));
  TransformReport report;
  report.chunk_len = plan.chunk_len();
  report.backend = plan.backend().name;
  try {
    runner.run(plan, in, in_skip, out, encrypt && with_header ? kSaltedHeaderLen : 0, report);
  } catch (const BadPaddingError& e) {
    // A wrong passphrase, or PBKDF2's other parameters than the file's, give
    // another key, whose padding fails; so does openssl enc without -pbkdf2,
    // which writes the same header with a key from EVP_BytesToKey.
    throw Error(std::string(e.what()) + ": a wrong passphrase, or PBKDF2 parameters other than " + in.name() +
                    " was made with (openssl enc's -md, -iter, key size); if it was made without -pbkdf2 "
                    "(openssl's legacy key derivation), paes can't read it",
                ErrorKind::failure, Remedy::pbkdf2_parameters);
  }
  return report;
}

namespace {

// In place (out starting where in does) is safe chunk by chunk, except where
// a chunk reads the ciphertext block before its own (CBC and CFB
// decryption): its neighbour has written plaintext there by then, and the
// result was wrong with no error. Other overlaps move data between chunks.
void refuse_unsafe_aliasing(const Job& plan, std::span<const std::uint8_t> out, std::span<const std::uint8_t> in) {
  if (in.empty() || out.empty()) return;
  const std::less<const std::uint8_t*> before;  // a total order, even between unrelated arrays
  const bool overlap = before(in.data(), out.data() + out.size()) && before(out.data(), in.data() + in.size());
  if (!overlap) return;
  if (in.data() != out.data()) {
    throw usage_error("transform_memory: the output overlaps the input without starting where it does: give "
                      "the same buffer (in place) or separate ones");
  }
  if (plan.lookback_len() != 0) {
    throw usage_error("transform_memory: this mode's decryption reads the ciphertext block before each chunk, "
                      "which in place is overwritten: give a separate output buffer");
  }
}

}  // namespace

std::uint64_t transform_memory(const CipherSpec& spec, std::span<std::uint8_t> out,
                               std::span<const std::uint8_t> in, const TransformOptions& options) {
  std::string why;
  const ChunkPlan plan = raw_plan_for(spec, options, in.size(), why);
  const std::uint64_t need = output_capacity(plan, in.size());
  if (out.size() < need) {
    throw Error("output buffer too small: " + std::to_string(out.size()) + " bytes, need " +
                std::to_string(need));
  }
  refuse_unsafe_aliasing(plan, out, in);
  MemorySource source(in);
  MemorySink sink(out);
  const auto engine = make_engine(options.engine, options.threads);
  engine->on_progress(options.progress);
  return engine->run(plan, source, sink);
}

}  // namespace paes
