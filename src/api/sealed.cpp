// run_sealed: the sealed format's front door. It builds or reads the preamble
// and the Tink header, derives the segment key, and hands the segments to the
// engine as a SegmentJob.
#include "paes/sealed.hpp"

#include "api/job_runner.hpp"
#include "cipher/kdf.hpp"
#include "format/sealed_format.hpp"
#include "paes/endpoint.hpp"
#include "paes/error.hpp"

namespace paes {
namespace {

static_assert(scrypt_memory({kMaxScryptLog2N, kScryptR, kScryptP}) <= kMaxScryptMemory &&
                  scrypt_memory({kMaxScryptLog2N + 1, kScryptR, kScryptP}) > kMaxScryptMemory,
              "kMaxScryptLog2N is the highest cost scrypt_key accepts with the format's r and p");

std::vector<std::uint8_t> associated_data(const SealedSpec& spec, std::span<const std::uint8_t> preamble) {
  std::vector<std::uint8_t> ad(preamble.begin(), preamble.end());
  ad.insert(ad.end(), spec.aad.begin(), spec.aad.end());
  return ad;
}

// The input keying material: the raw key, or the key scrypt derives from the
// passphrase with the preamble's parameters.
SecretBytes input_key(const SealedSpec& spec, const Preamble& preamble, const std::string& name) {
  const bool file_wants_passphrase = preamble.key_source == KeySource::scrypt_passphrase;
  if (file_wants_passphrase && spec.passphrase.empty()) {
    throw usage_error(name + " was sealed with a passphrase: give --passphrase-file, "
                      "--passphrase-env, or type it at the prompt");
  }
  if (!file_wants_passphrase && !spec.passphrase.empty()) {
    throw usage_error(name + " was sealed with a key, not a passphrase: give --key-file or --key-env");
  }
  if (file_wants_passphrase) {
    return scrypt_key(spec.passphrase, preamble.scrypt_salt, preamble.scrypt, preamble.key_len);
  }
  if (spec.key.size() != preamble.key_len) {
    throw Error("wrong key: " + name + " was sealed with a " + std::to_string(preamble.key_len) +
                "-byte key, this key has " + std::to_string(spec.key.size()) + " bytes");
  }
  return spec.key.clone();
}

TransformReport seal(const SealedSpec& spec, const std::string& input_path,
                     const std::string& output_path, const TransformOptions& options) {
  const bool with_passphrase = !spec.passphrase.empty();
  if (with_passphrase && spec.format == SealedFormat::tink) {
    throw usage_error("--format tink takes a raw key (--key-file or --key-env), not a passphrase");
  }
  if (with_passphrase && (spec.scrypt_log2_n == 0 || spec.scrypt_log2_n > kMaxScryptLog2N)) {
    throw usage_error("scrypt cost log2 N must be between 1 and " + std::to_string(kMaxScryptLog2N) + ", got " +
                      std::to_string(spec.scrypt_log2_n));
  }
  const std::size_t key_len = with_passphrase ? spec.key_len : spec.key.size();
  check_sealed_params(key_len, spec.segment_len);
  JobRunner runner(options);
  InputEndpoint in(input_path, false);

  Preamble preamble;
  preamble.key_len = static_cast<std::uint8_t>(key_len);
  preamble.segment_len = spec.segment_len;
  SecretBytes ikm;
  if (with_passphrase) {
    preamble.key_source = KeySource::scrypt_passphrase;
    preamble.scrypt = {spec.scrypt_log2_n, kScryptR, kScryptP};
    random_bytes(preamble.scrypt_salt);
    ikm = scrypt_key(spec.passphrase, preamble.scrypt_salt, preamble.scrypt, key_len);
  } else {
    ikm = spec.key.clone();
  }
  const auto preamble_bytes = preamble.encode();
  const bool paes_format = spec.format == SealedFormat::paes;
  const std::span<const std::uint8_t> bound =
      paes_format ? std::span<const std::uint8_t>(preamble_bytes) : std::span<const std::uint8_t>();
  const StreamHeader header = StreamHeader::random(key_len);
  const SecretBytes segment_key = hkdf_sha256(ikm, header.salt, associated_data(spec, bound), key_len);
  const SegmentJob job(Direction::encrypt, key_len, spec.segment_len, segment_key, header.nonce_prefix);
  if (const auto size = in.size()) job.chunk_count(*size);  // refuse before creating the output

  OutputEndpoint out(output_path, output_options(options, Direction::encrypt, in), true);
  if (paes_format) out.write_prefix(preamble_bytes);
  const auto header_bytes = header.encode();
  out.write_prefix(header_bytes);
  TransformReport report;
  report.chunk_len = spec.segment_len;
  runner.run(job, in, 0, out, bound.size() + header_bytes.size(), report);
  return report;
}

TransformReport open(const SealedSpec& spec, const std::string& input_path,
                     const std::string& output_path, const TransformOptions& options) {
  JobRunner runner(options);
  InputEndpoint in(input_path, true);
  std::array<std::uint8_t, kPreambleLen> preamble_bytes{};
  Preamble preamble;
  SecretBytes ikm;
  std::span<const std::uint8_t> bound;
  if (spec.format == SealedFormat::paes) {
    const std::size_t got = in.read_prefix(preamble_bytes);
    preamble = Preamble::decode(std::span(preamble_bytes).first(got), in.name());
    ikm = input_key(spec, preamble, in.name());
    bound = preamble_bytes;
  } else {
    if (!spec.passphrase.empty()) {
      throw usage_error("--format tink takes a raw key (--key-file or --key-env), not a passphrase");
    }
    check_sealed_params(spec.key.size(), spec.segment_len);
    preamble.key_len = static_cast<std::uint8_t>(spec.key.size());
    preamble.segment_len = spec.segment_len;
    ikm = spec.key.clone();
  }
  std::vector<std::uint8_t> header_bytes(StreamHeader::length(preamble.key_len));
  if (in.read_prefix(header_bytes) != header_bytes.size()) throw Error(in.name() + ": truncated header");
  const StreamHeader header = StreamHeader::decode(header_bytes, preamble.key_len);
  const SecretBytes segment_key = hkdf_sha256(ikm, header.salt, associated_data(spec, bound), preamble.key_len);
  const SegmentJob job(Direction::decrypt, preamble.key_len, preamble.segment_len, segment_key,
                       header.nonce_prefix);
  const std::uint64_t body_offset = bound.size() + header_bytes.size();
  if (const auto size = in.size()) job.chunk_count(*size - body_offset);

  OutputEndpoint out(output_path, output_options(options, Direction::decrypt, in), false);
  TransformReport report;
  report.chunk_len = preamble.segment_len;
  runner.run(job, in, body_offset, out, 0, report);
  return report;
}

}  // namespace

std::uint64_t max_scrypt_memory() { return kMaxScryptMemory; }

TransformReport run_sealed(const SealedSpec& spec, const std::string& input_path,
                           const std::string& output_path, const TransformOptions& options) {
  return spec.direction == Direction::encrypt ? seal(spec, input_path, output_path, options)
                                              : open(spec, input_path, output_path, options);
}

}  // namespace paes
