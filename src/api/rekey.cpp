// rekey_sealed: a version-3 file's header rewritten, its body copied as it
// is, and every segment of it authenticated on the way.
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/job_runner.hpp"
#include "api/recipients.hpp"
#include "cipher/kdf.hpp"
#include "cipher/x25519.hpp"
#include "format/sealed_format.hpp"
#include "format/x25519_stanza.hpp"
#include "paes/endpoint.hpp"
#include "paes/engine.hpp"
#include "paes/error.hpp"
#include "paes/sealed.hpp"
#include "util/elapsed.hpp"

namespace paes {
namespace {

// Plaintext nobody reads: rekey decrypts the body only to authenticate it.
class DiscardSink final : public Sink {
 public:
  void write_at(std::uint64_t, std::span<const std::uint8_t>) override {}
};

// The body's segments as opening would run them: the Tink header at the
// start of `body` gives the segment key under `body_ikm` and the associated
// data (preamble || aad).
SegmentJob body_job(std::span<const std::uint8_t> tink_header, const SecretBytes& body_ikm,
                    std::span<const std::uint8_t> preamble, const std::vector<std::uint8_t>& aad,
                    std::uint32_t segment_len, const BackendChoice& backend) {
  const StreamHeader header = StreamHeader::decode(tink_header, kRecipientsKeyLen);
  std::vector<std::uint8_t> associated(preamble.begin(), preamble.end());
  associated.insert(associated.end(), aad.begin(), aad.end());
  const SecretBytes segment_key = hkdf_sha256(body_ikm, header.salt, associated, kRecipientsKeyLen);
  return SegmentJob(Direction::decrypt, kRecipientsKeyLen, segment_len, segment_key, header.nonce_prefix, backend);
}

// A stream's body from its current position to its end, copied in order,
// each segment written only after it authenticated: a truncated or damaged
// body fails before its bad part reaches the output.
std::uint64_t copy_authenticated_stream(InputEndpoint& in, OutputEndpoint& out, const SecretBytes& body_ikm,
                                        std::span<const std::uint8_t> preamble, const RekeySpec& spec,
                                        std::uint32_t segment_len, const TransformOptions& options) {
  std::vector<std::uint8_t> tink_header(StreamHeader::length(kRecipientsKeyLen));
  if (in.read_prefix(tink_header) != tink_header.size()) throw Error(in.name() + ": truncated header");
  const SegmentJob job = body_job(tink_header, body_ikm, preamble, spec.aad, segment_len, options.backend);
  const auto worker = job.make_worker();
  out.write_prefix(tink_header);
  std::uint64_t copied = tink_header.size();
  std::vector<std::uint8_t> segment(job.nominal_in_len(0)), next, plain;
  segment.resize(in.read_prefix(segment));
  for (std::uint64_t index = 0;; ++index) {
    next.resize(job.nominal_in_len(index + 1));
    next.resize(in.read_prefix(next));
    const bool last = next.empty();
    if (segment.size() < kTagLen || (!last && segment.size() != job.nominal_in_len(index))) {
      throw Error(in.name() + ": truncated (the body ends inside a segment)");
    }
    const Chunk chunk = job.chunk(index, segment.size(), last);
    plain.resize(job.out_capacity(chunk));
    worker->transform(chunk, plain.data(), segment.data());
    out.write_prefix(segment);
    copied += segment.size();
    if (last) return copied;
    segment.swap(next);
  }
}

// A file's body at `body_offset`, authenticated segment by segment on the
// threads engine, as opening runs it, before the body is copied.
void authenticate_file_body(InputEndpoint& in, std::uint64_t body_offset, const SecretBytes& body_ikm,
                            std::span<const std::uint8_t> preamble, const RekeySpec& spec, std::uint32_t segment_len,
                            const TransformOptions& options) {
  std::vector<std::uint8_t> tink_header(StreamHeader::length(kRecipientsKeyLen));
  const std::uint64_t size = in.size().value_or(0);
  if (size < body_offset + tink_header.size()) throw Error(in.name() + ": truncated header");
  in.file().read_at(body_offset, tink_header);
  const SegmentJob job = body_job(tink_header, body_ikm, preamble, spec.aad, segment_len, options.backend);
  OffsetSource segments(in.file(), body_offset + tink_header.size());
  job.chunk_count(segments.size());  // a length no sealing makes: truncated
  DiscardSink discard;
  make_engine(EngineKind::threads, options.threads != 0 ? options.threads : online_cpus())->run(job, segments, discard);
}

}  // namespace

RekeyReport rekey_sealed(const RekeySpec& spec, const std::string& input_path, const std::string& output_path,
                         const TransformOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (spec.identities.empty()) throw usage_error("re-keying opens the file's header: give an identity that opens it");
  if (spec.recipients.empty() && !spec.keep_recipients) {
    throw usage_error("re-keying to no recipient would leave a file nobody can open: give the new recipients");
  }
  // Armor on either side makes that side a stream: the body then goes through
  // the decoder or encoder (copy_authenticated_stream) instead of being
  // shared in the kernel.
  InputEndpoint in(input_path, true, Armor::paes);
  std::array<std::uint8_t, kPreambleLen> preamble_bytes{};
  const std::size_t got = in.read_prefix(preamble_bytes);
  const Preamble preamble = Preamble::decode(std::span(preamble_bytes).first(got), in.name());
  const auto refuse = [&](const std::string& sealed_with) {
    return usage_error(in.name() + " was sealed with " + sealed_with + ", not to recipients: only a file sealed to "
                       "recipients can be re-keyed; decrypt it and seal it again");
  };
  if (preamble.key_source != KeySource::recipient_stanzas) {
    throw refuse(preamble.key_source == KeySource::scrypt_passphrase ? "a passphrase" : "a key");
  }
  SealedSpec opening;
  for (const Identity& identity : spec.identities) opening.identities.push_back(identity.clone());
  opening.ui = spec.ui;
  opening.aad = spec.aad;
  // A recipients file sealed before its MAC covered the aad opens here with
  // open_stanzas' warning: the header written below covers the aad, so the
  // output commits to it (and to the body authenticated under it).
  opening.allow_uncommitted = true;
  StanzaHeader read = read_v3_header(in, kPreambleLen);
  if (stanzas_key_kind(read, in.name()) == SealedKeyKind::passphrase) {
    throw refuse("a passphrase (its scrypt stanza stands alone, as age.md requires)");
  }
  const OpenedStanzas opened = open_stanzas(opening, preamble, preamble_bytes, std::move(read), in.name());

  std::vector<Stanza> stanzas;
  if (spec.keep_recipients) {
    // As they are, unknown types too; but an X25519 stanza that opening
    // never reached (it stopped at the one that opened) is checked as
    // opening checks it, so that no reader refuses the header written here.
    // A low-order share gives X25519 no secret whatever the scalar: any
    // scalar tells, a throwaway one as well as the stanza's owner's.
    stanzas = opened.header.stanzas;
    const SecretBytes probe = x25519_generate_identity();
    const X25519PublicKey probe_public = x25519_public_of(probe);
    for (const Stanza& kept : stanzas) {
      if (kept.type == kX25519StanzaType) unwrap_x25519(kept, probe, probe_public, in.name());
    }
  }
  if (stanzas.size() + spec.recipients.size() > kMaxStanzas) {
    throw usage_error("at most " + std::to_string(kMaxStanzas) + " recipients, and this would make " +
                      std::to_string(stanzas.size() + spec.recipients.size()));
  }
  std::vector<Stanza> added = wrap_to_recipients(spec.recipients, opened.file_key, spec.ui);
  stanzas.insert(stanzas.end(), std::make_move_iterator(added.begin()), std::make_move_iterator(added.end()));
  const std::string header =
      encode_stanza_header(preamble_bytes, stanzas, HeaderMacKey::of_file_key(opened.file_key), spec.aad);
  if (header.size() > kMaxHeaderLen) {
    throw Error("the re-keyed header would be " + std::to_string(header.size()) + " bytes, past the " +
                std::to_string(kMaxHeaderLen >> 20) + " MiB every reader accepts: keep fewer recipients");
  }

  const std::uint64_t body_offset = kPreambleLen + opened.header.length;
  OutputEndpoint out(output_path, output_options(options, Direction::encrypt, in), true,
                     options.armor ? Armor::paes : Armor::none);
  out.write_prefix(preamble_bytes);
  out.write_prefix({reinterpret_cast<const std::uint8_t*>(header.data()), header.size()});
  RekeyReport report;
  report.recipients_before = opened.header.stanzas.size();
  report.recipients_after = stanzas.size();
  if (in.random_access() && out.random_access()) {
    authenticate_file_body(in, body_offset, opened.body_ikm, preamble_bytes, spec, preamble.segment_len, options);
    const std::uint64_t size = in.size().value_or(0);
    report.body_bytes = size - std::min(size, body_offset);
    copy_file_bytes(in.file(), body_offset, out.file().fd(), kPreambleLen + header.size(), report.body_bytes);
    report.copied_in_kernel = true;
  } else {
    report.body_bytes =
        copy_authenticated_stream(in, out, opened.body_ikm, preamble_bytes, spec, preamble.segment_len, options);
  }
  out.commit();
  report.seconds = seconds_since(start);
  return report;
}

}  // namespace paes
