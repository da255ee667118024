// rekey_sealed: a version-3 paes file's or an age file's header rewritten,
// its body copied as it is, and every segment of it authenticated on the way.
#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/job_runner.hpp"
#include "api/recipients.hpp"
#include "cipher/kdf.hpp"
#include "cipher/x25519.hpp"
#include "format/age_format.hpp"
#include "format/sealed_format.hpp"
#include "format/x25519_stanza.hpp"
#include "paes/endpoint.hpp"
#include "paes/engine.hpp"
#include "paes/error.hpp"
#include "paes/sealed.hpp"
#include "util/elapsed.hpp"
#include "util/text.hpp"

namespace paes {
namespace {

// Plaintext nobody reads: rekey decrypts the body only to authenticate it.
class DiscardSink final : public Sink {
 public:
  void write_at(std::uint64_t, std::span<const std::uint8_t>) override {}
};

// How a body opens: its first `prefix_len` bytes (the Tink header, age's
// payload nonce) give the job of its segments, as opening would run them.
struct BodyOpener {
  std::size_t prefix_len = 0;
  std::function<SegmentJob(std::span<const std::uint8_t> prefix)> job;
};

// A paes body: the Tink header at its start gives the segment key under
// `body_ikm` and the associated data (preamble || aad).
BodyOpener paes_body(SecretBytes body_ikm, std::span<const std::uint8_t> preamble, const std::vector<std::uint8_t>& aad,
                     std::uint32_t segment_len, const BackendChoice& backend) {
  std::vector<std::uint8_t> associated(preamble.begin(), preamble.end());
  associated.insert(associated.end(), aad.begin(), aad.end());
  auto ikm = std::make_shared<SecretBytes>(std::move(body_ikm));
  return {StreamHeader::length(kRecipientsKeyLen), [=](std::span<const std::uint8_t> tink_header) {
            const StreamHeader header = StreamHeader::decode(tink_header, kRecipientsKeyLen);
            const SecretBytes segment_key = hkdf_sha256(*ikm, header.salt, associated, kRecipientsKeyLen);
            return SegmentJob(Direction::decrypt, kRecipientsKeyLen, segment_len, segment_key, header.nonce_prefix,
                              backend);
          }};
}

// age's payload: its nonce and the file key give the payload key.
BodyOpener age_body(const SecretBytes& file_key) {
  auto key = std::make_shared<SecretBytes>(file_key.clone());
  return {kAgePayloadNonceLen, [=](std::span<const std::uint8_t> nonce) {
            return SegmentJob(Direction::decrypt, std::make_shared<AgeChunks>(age_payload_key(*key, nonce)));
          }};
}

// A stream's body from its current position to its end, copied in order,
// each chunk written only after it authenticated: a truncated or damaged
// body fails before its bad part reaches the output.
std::uint64_t copy_authenticated_stream(InputEndpoint& in, OutputEndpoint& out, const BodyOpener& body) {
  std::vector<std::uint8_t> prefix(body.prefix_len);
  if (in.read_prefix(prefix) != prefix.size()) throw Error(in.name() + ": truncated header");
  const SegmentJob job = body.job(prefix);
  const auto worker = job.make_worker();
  out.write_prefix(prefix);
  std::uint64_t copied = prefix.size();
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

// A file's body at `body_offset`, authenticated on the threads engine, as
// opening runs it, before the body is copied.
void authenticate_file_body(InputEndpoint& in, std::uint64_t body_offset, const BodyOpener& body,
                            const TransformOptions& options) {
  std::vector<std::uint8_t> prefix(body.prefix_len);
  const std::uint64_t size = in.size().value_or(0);
  if (size < body_offset + prefix.size()) throw Error(in.name() + ": truncated header");
  in.file().read_at(body_offset, prefix);
  const SegmentJob job = body.job(prefix);
  OffsetSource segments(in.file(), body_offset + prefix.size());
  job.chunk_count(segments.size());  // a length no sealing makes: truncated
  DiscardSink discard;
  make_engine(EngineKind::threads, options.threads != 0 ? options.threads : online_cpus())->run(job, segments, discard);
}

[[noreturn]] void refuse_sealed_with(const std::string& name, const std::string& sealed_with) {
  throw usage_error(name + " was sealed with " + sealed_with + ", not to recipients: only a file sealed to "
                    "recipients can be re-keyed; decrypt it and seal it again");
}

// The output's stanzas: the file's own (spec.keep_recipients) and the new
// recipients' stanzas of `file_key`.
std::vector<Stanza> rekeyed_stanzas(const RekeySpec& spec, const std::vector<Stanza>& own, const SecretBytes& file_key,
                                    const std::string& name) {
  std::vector<Stanza> stanzas;
  if (spec.keep_recipients) {
    // As they are, unknown types too; but an X25519 stanza that opening
    // never reached (it stopped at the one that opened) is checked as
    // opening checks it, so that no reader refuses the header written here.
    // A low-order share gives X25519 no secret whatever the scalar: any
    // scalar tells, a throwaway one as well as the stanza's owner's.
    stanzas = own;
    const X25519PrivateKey probe(x25519_generate_identity());
    for (const Stanza& kept : stanzas) {
      if (kept.type == kX25519StanzaType) unwrap_x25519(kept, probe, name);
    }
  }
  if (stanzas.size() + spec.recipients.size() > kMaxStanzas) {
    throw usage_error("at most " + std::to_string(kMaxStanzas) + " recipients, and this would make " +
                      std::to_string(stanzas.size() + spec.recipients.size()));
  }
  std::vector<Stanza> added = wrap_to_recipients(spec.recipients, file_key, spec.ui);
  stanzas.insert(stanzas.end(), std::make_move_iterator(added.begin()), std::make_move_iterator(added.end()));
  return stanzas;
}

// What re-keying writes before the body, and how the body opens.
struct Rekeyed {
  std::string header;            // the preamble or age's version line, the new stanzas and MAC line
  std::uint64_t body_offset = 0;  // where the input's body starts
  std::size_t stanzas_before = 0, stanzas_after = 0;
  BodyOpener body;
  Armor armor = Armor::paes;  // the format's own, for -a
};

SealedSpec opening_spec(const RekeySpec& spec) {
  SealedSpec opening;
  for (const Identity& identity : spec.identities) opening.identities.push_back(identity.clone());
  opening.ui = spec.ui;
  opening.aad = spec.aad;
  return opening;
}

// An age file after its version line: the header opened with the
// identities (its MAC checked), rewritten under the same file key.
Rekeyed rekey_age(const RekeySpec& spec, InputEndpoint& in) {
  const StanzaHeader read = read_v3_header(in, kAgeVersionLine.size());
  if (stanzas_key_kind(read, in.name()) == SealedKeyKind::passphrase) {
    refuse_sealed_with(in.name(), "a passphrase (its scrypt stanza stands alone, as age.md requires)");
  }
  const SecretBytes file_key = open_age_stanzas(opening_spec(spec), read, as_bytes(kAgeVersionLine), in.name());
  const std::vector<Stanza> stanzas = rekeyed_stanzas(spec, read.stanzas, file_key, in.name());
  Rekeyed r;
  r.header = encode_age_header(stanzas, file_key);
  r.body_offset = kAgeVersionLine.size() + read.length;
  r.stanzas_before = read.stanzas.size();
  r.stanzas_after = stanzas.size();
  r.body = age_body(file_key);
  r.armor = Armor::age;
  return r;
}

// A paes file whose preamble is `preamble_bytes` (`got` of them read).
Rekeyed rekey_paes(const RekeySpec& spec, InputEndpoint& in,
                   const std::array<std::uint8_t, kPreambleLen>& preamble_bytes, std::size_t got,
                   const TransformOptions& options) {
  const Preamble preamble = Preamble::decode(std::span(preamble_bytes).first(got), in.name());
  if (preamble.key_source != KeySource::recipient_stanzas) {
    refuse_sealed_with(in.name(), preamble.key_source == KeySource::scrypt_passphrase ? "a passphrase" : "a key");
  }
  SealedSpec opening = opening_spec(spec);
  // A recipients file sealed before its MAC covered the aad opens here with
  // open_stanzas' warning: the header written below covers the aad, so the
  // output commits to it (and to the body authenticated under it).
  opening.allow_uncommitted = true;
  StanzaHeader read = read_v3_header(in, kPreambleLen);
  if (stanzas_key_kind(read, in.name()) == SealedKeyKind::passphrase) {
    refuse_sealed_with(in.name(), "a passphrase (its scrypt stanza stands alone, as age.md requires)");
  }
  OpenedStanzas opened = open_stanzas(opening, preamble, preamble_bytes, std::move(read), in.name());
  const std::vector<Stanza> stanzas = rekeyed_stanzas(spec, opened.header.stanzas, opened.file_key, in.name());
  Rekeyed r;
  r.header.assign(preamble_bytes.begin(), preamble_bytes.end());
  r.header += encode_stanza_header(preamble_bytes, stanzas, HeaderMacKey::of_file_key(opened.file_key), spec.aad);
  r.body_offset = kPreambleLen + opened.header.length;
  r.stanzas_before = opened.header.stanzas.size();
  r.stanzas_after = stanzas.size();
  r.body = paes_body(std::move(opened.body_ikm), preamble_bytes, spec.aad, preamble.segment_len, options.backend);
  return r;
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
  const FileStart file_start = read_file_start(in);
  const Rekeyed rekeyed = file_start.age ? rekey_age(spec, in)
                                         : rekey_paes(spec, in, file_start.bytes, file_start.got, options);
  // The prefix (preamble or version line) is at most a few dozen bytes of it.
  if (rekeyed.header.size() > kMaxHeaderLen) {
    throw Error("the re-keyed header would be " + std::to_string(rekeyed.header.size()) + " bytes, past the " +
                std::to_string(kMaxHeaderLen >> 20) + " MiB every reader accepts: keep fewer recipients");
  }

  OutputEndpoint out(output_path, output_options(options, Direction::encrypt, in), true,
                     options.armor ? rekeyed.armor : Armor::none);
  out.write_prefix({reinterpret_cast<const std::uint8_t*>(rekeyed.header.data()), rekeyed.header.size()});
  RekeyReport report;
  report.recipients_before = rekeyed.stanzas_before;
  report.recipients_after = rekeyed.stanzas_after;
  if (in.random_access() && out.random_access()) {
    authenticate_file_body(in, rekeyed.body_offset, rekeyed.body, options);
    const std::uint64_t size = in.size().value_or(0);
    report.body_bytes = size - std::min(size, rekeyed.body_offset);
    copy_file_bytes(in.file(), rekeyed.body_offset, out.file().fd(), rekeyed.header.size(), report.body_bytes);
    report.copied_in_kernel = true;
  } else {
    report.body_bytes = copy_authenticated_stream(in, out, rekeyed.body);
  }
  out.commit();
  report.seconds = seconds_since(start);
  return report;
}

}  // namespace paes
