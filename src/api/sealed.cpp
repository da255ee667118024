// run_sealed: the sealed format's front door. It builds or reads the preamble,
// a version-3 file's header of stanzas (api/recipients.hpp) and the Tink
// header, derives the segment key, and hands the segments to the engine as a
// SegmentJob.
#include "paes/sealed.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>

#include "api/job_runner.hpp"
#include "api/recipients.hpp"
#include "cipher/kdf.hpp"
#include "cipher/segment_codec.hpp"
#include "engine/feed.hpp"
#include "format/age_format.hpp"
#include "format/scrypt_stanza.hpp"
#include "format/sealed_format.hpp"
#include "format/x25519_stanza.hpp"
#include "paes/endpoint.hpp"
#include "paes/error.hpp"
#include "paes/notice.hpp"
#include "util/armor.hpp"
#include "util/elapsed.hpp"
#include "util/text.hpp"

namespace paes {
namespace {

static_assert(scrypt_memory({kMaxScryptLog2N, kScryptR, kScryptP}) <= kMaxScryptMemory &&
                  scrypt_memory({kMaxScryptLog2N + 1, kScryptR, kScryptP}) > kMaxScryptMemory,
              "kMaxScryptLog2N is the highest cost scrypt_key accepts with the format's r and p");
static_assert(kMaxScryptLog2N == kMaxScryptWorkFactor, "paes seals with the work factors it opens");

std::vector<std::uint8_t> associated_data(const SealedSpec& spec, std::span<const std::uint8_t> preamble) {
  std::vector<std::uint8_t> ad(preamble.begin(), preamble.end());
  ad.insert(ad.end(), spec.aad.begin(), spec.aad.end());
  return ad;
}

// The input keying material of a version-1 file, when the caller allows
// files that don't commit: the raw key, or the key scrypt derives from the
// passphrase with the preamble's parameters. Without commitment, a file can
// be built to open to other bytes under another key or passphrase.
SecretBytes uncommitted_input_key(const SealedSpec& spec, const Preamble& preamble, const std::string& name) {
  const bool file_wants_passphrase = preamble.key_source == KeySource::scrypt_passphrase;
  require_secret(spec, file_wants_passphrase ? SealedKeyKind::passphrase : SealedKeyKind::raw_key, name);
  const std::string secret = file_wants_passphrase ? "passphrase" : "key";
  if (!spec.allow_uncommitted) {
    throw Error(name + ": a version-1 paes file, which does not commit to its " + secret +
                    ": such a file can be made to open to other bytes under another " + secret +
                    " (refused before any plaintext)",
                ErrorKind::failure, Remedy::allow_uncommitted);
  }
  notify(NoticeLevel::warning, name + ": a version-1 paes file, which does not commit to its " + secret +
                                   ": another " + secret + " could open it to other bytes; seal it again to commit");
  if (file_wants_passphrase) {
    return scrypt_key(spec.passphrase, preamble.salt, preamble.scrypt, preamble.key_len);
  }
  if (spec.key.size() != preamble.key_len) {
    throw Error("wrong key: " + name + " was sealed with a " + std::to_string(preamble.key_len) +
                "-byte key, this key has " + std::to_string(spec.key.size()) + " bytes");
  }
  return spec.key.clone();
}

// An age v1 file: a random file key wrapped in one scrypt stanza or to the
// recipients, the header under its MAC, the payload nonce, then the payload's
// chunks as a SegmentJob. What age's format has no place for is refused.
TransformReport seal_age(const SealedSpec& spec, const std::string& input_path, const std::string& output_path,
                         const TransformOptions& options) {
  const bool with_passphrase = !spec.passphrase.empty();
  if (!spec.key.empty()) {
    throw usage_error("age's format takes recipients or a passphrase, not a raw key", Remedy::key);
  }
  if (!spec.identities.empty()) throw usage_error("identities open files; sealing takes recipients");
  if (!spec.aad.empty()) throw usage_error("age's format has no associated data");
  if (with_passphrase && !spec.recipients.empty()) {
    throw usage_error("age's format takes a passphrase alone: its scrypt stanza can't stand beside recipients");
  }
  if (!with_passphrase && spec.recipients.empty()) throw usage_error("an age file needs recipients or a passphrase");
  if (spec.recipients.size() > kMaxStanzas) {
    throw usage_error("at most " + std::to_string(kMaxStanzas) + " recipients, got " +
                      std::to_string(spec.recipients.size()));
  }
  if (with_passphrase && (spec.scrypt_log2_n == 0 || spec.scrypt_log2_n > kMaxScryptLog2N)) {
    throw usage_error("scrypt cost log2 N must be between 1 and " + std::to_string(kMaxScryptLog2N) + ", got " +
                      std::to_string(spec.scrypt_log2_n));
  }
  JobRunner runner(options);
  InputEndpoint in(input_path, false);
  SecretBytes file_key;
  std::vector<Stanza> stanzas;
  if (with_passphrase) {
    file_key = SecretBytes(kFileKeyLen);
    random_bytes({file_key.data(), file_key.size()});
    stanzas.push_back(wrap_scrypt(file_key, spec.passphrase, spec.scrypt_log2_n));
  } else {
    NewFileKey fresh = new_file_key(spec);
    file_key = std::move(fresh.file_key);
    stanzas = std::move(fresh.stanzas);
  }
  const std::string header = encode_age_header(stanzas, file_key);
  std::array<std::uint8_t, kAgePayloadNonceLen> nonce{};
  random_bytes(nonce);
  const SegmentJob job(Direction::encrypt, std::make_shared<AgeChunks>(age_payload_key(file_key, nonce)));
  if (const auto size = in.size()) job.chunk_count(*size);

  OutputEndpoint out(output_path, output_options(options, Direction::encrypt, in), true,
                     options.armor ? Armor::age : Armor::none);
  out.write_prefix(as_bytes(header));
  out.write_prefix(nonce);
  TransformReport report;
  report.chunk_len = kAgeChunkPlainLen + kTagLen;
  report.key_bits = kAgePayloadKeyLen * 8;
  report.age = true;
  runner.run(job, in, 0, out, header.size() + nonce.size(), report);
  return report;
}

TransformReport seal(const SealedSpec& spec, const std::string& input_path,
                     const std::string& output_path, const TransformOptions& options) {
  if (spec.format == SealedFormat::age) return seal_age(spec, input_path, output_path, options);
  const bool with_passphrase = !spec.passphrase.empty();
  const bool with_recipients = !spec.recipients.empty();
  if (!spec.identities.empty()) throw usage_error("identities open files; sealing takes recipients");
  if (with_recipients && (with_passphrase || !spec.key.empty())) {
    throw usage_error("recipients seal with a random file key: give no key or passphrase with them");
  }
  if (with_passphrase && !spec.key.empty()) {  // the key was ignored: opening with it would fail
    throw usage_error("a file is sealed with a key or with a passphrase, not both");
  }
  if (with_recipients && spec.format == SealedFormat::tink) {
    throw usage_error("the Tink format takes a raw key; recipients need the paes format");
  }
  if (spec.recipients.size() > kMaxStanzas) {
    throw usage_error("at most " + std::to_string(kMaxStanzas) + " recipients, got " +
                      std::to_string(spec.recipients.size()));
  }
  if (with_passphrase && spec.format == SealedFormat::tink) {
    throw usage_error("the Tink format takes a raw key, not a passphrase", Remedy::key);
  }
  if (with_passphrase && (spec.scrypt_log2_n == 0 || spec.scrypt_log2_n > kMaxScryptLog2N)) {
    throw usage_error("scrypt cost log2 N must be between 1 and " + std::to_string(kMaxScryptLog2N) + ", got " +
                      std::to_string(spec.scrypt_log2_n));
  }
  if (with_passphrase && spec.key_len != kRecipientsKeyLen) {
    throw usage_error("a passphrase seals an AES-256 body (its scrypt stanza wraps a random file key); a " +
                      std::to_string(spec.key_len * 8) + "-bit key needs a raw key");
  }
  const bool paes_format = spec.format == SealedFormat::paes;
  const bool key_in_stanzas = with_recipients || with_passphrase;
  const std::size_t key_len = key_in_stanzas ? kRecipientsKeyLen : spec.key.size();
  check_sealed_params(key_len, spec.segment_len);
  JobRunner runner(options);
  InputEndpoint in(input_path, false);

  Preamble preamble;
  preamble.key_len = static_cast<std::uint8_t>(key_len);
  preamble.segment_len = spec.segment_len;
  preamble.key_source = key_in_stanzas ? KeySource::recipient_stanzas : KeySource::raw_key;
  // A raw key's MAC line has no random stanza in it: the preamble's salt
  // makes it differ between files under one key, which it would otherwise link.
  if (!key_in_stanzas && paes_format) random_bytes(preamble.salt);
  const auto preamble_bytes = preamble.encode();
  // The body's associated data is the preamble (and the aad) alone: the
  // stanzas stay outside it, so a re-key rewrites only the header.
  const std::span<const std::uint8_t> bound = paes_format ? std::span<const std::uint8_t>(preamble_bytes)
                                                          : std::span<const std::uint8_t>();
  // The header's MAC commits to the key material and to the aad: with the
  // file key for stanzas, with the raw key itself when there are none.
  SecretBytes ikm;
  std::string stanza_header;
  if (key_in_stanzas) {
    // A passphrase's file (one scrypt stanza, no recipients) or recipients'.
    NewFileKey fresh = new_file_key(spec);
    const SecretBytes& file_key = fresh.file_key;
    std::vector<Stanza> stanzas;
    if (with_passphrase) stanzas.push_back(wrap_scrypt(file_key, spec.passphrase, spec.scrypt_log2_n));
    stanzas.insert(stanzas.end(), std::make_move_iterator(fresh.stanzas.begin()),
                   std::make_move_iterator(fresh.stanzas.end()));
    stanza_header = encode_stanza_header(preamble_bytes, stanzas, HeaderMacKey::of_file_key(file_key), spec.aad);
    ikm = body_key(file_key);
  } else {
    if (paes_format) {
      stanza_header = encode_stanza_header(preamble_bytes, {}, HeaderMacKey::of_raw_key(spec.key), spec.aad);
    }
    ikm = spec.key.clone();
  }
  const StreamHeader header = StreamHeader::random(key_len);
  const SecretBytes segment_key = hkdf_sha256(ikm, header.salt, associated_data(spec, bound), key_len);
  const SegmentJob job(Direction::encrypt, key_len, spec.segment_len, segment_key, header.nonce_prefix,
                       options.backend.for_job_of(in.size()));
  if (const auto size = in.size()) job.chunk_count(*size);  // refuse before creating the output

  OutputEndpoint out(output_path, output_options(options, Direction::encrypt, in), true,
                     options.armor ? Armor::paes : Armor::none);
  out.write_prefix(bound);
  out.write_prefix({reinterpret_cast<const std::uint8_t*>(stanza_header.data()), stanza_header.size()});
  const auto header_bytes = header.encode();
  out.write_prefix(header_bytes);
  TransformReport report;
  report.chunk_len = spec.segment_len;
  report.key_bits = static_cast<unsigned>(key_len * 8);
  report.backend = job.backend().name;
  runner.run(job, in, 0, out, bound.size() + stanza_header.size() + header_bytes.size(), report);
  return report;
}

// What opening a sealed input learns before its body: its segments' stream
// (keyed) and where the body starts.
struct OpenedHeader {
  std::shared_ptr<const SegmentStream> stream;
  std::uint64_t body_offset = 0;
  unsigned key_bits = 0;
  std::uint32_t segment_len = 0;  // ciphertext bytes per segment (age: per chunk)
  bool age = false;
};

// An age file after its version line: the header opened (its MAC verified)
// and the payload nonce read.
OpenedHeader read_age_header(const SealedSpec& spec, InputEndpoint& in) {
  const StanzaHeader header = read_v3_header(in, kAgeVersionLine.size());
  const SecretBytes file_key = open_age_stanzas(spec, header, as_bytes(kAgeVersionLine), in.name());
  std::array<std::uint8_t, kAgePayloadNonceLen> nonce{};
  if (in.read_prefix(nonce) != nonce.size()) throw Error(in.name() + ": truncated: the file ends in its payload nonce");
  OpenedHeader opened;
  opened.stream = std::make_shared<AgeChunks>(age_payload_key(file_key, nonce));
  opened.body_offset = kAgeVersionLine.size() + header.length + nonce.size();
  opened.key_bits = kAgePayloadKeyLen * 8;
  opened.segment_len = static_cast<std::uint32_t>(kAgeChunkPlainLen + kTagLen);
  opened.age = true;
  return opened;
}

// Reads the preamble (paes format), or age's version line and header, and
// the Tink header from `in`. An age file is told by its version line unless
// the caller asked for a bare Tink stream.
OpenedHeader read_header(const SealedSpec& spec, InputEndpoint& in, const BackendChoice& backend) {
  std::array<std::uint8_t, kPreambleLen> preamble_bytes{};
  Preamble preamble;
  SecretBytes ikm;
  std::span<const std::uint8_t> bound;  // the preamble: the body's associated data with the aad
  std::uint64_t stanzas_len = 0;
  if (spec.format != SealedFormat::tink) {
    const FileStart start = read_file_start(in);
    if (start.age) return read_age_header(spec, in);
    if (spec.format == SealedFormat::age) {
      throw Error(in.name() + ": not an age file (it doesn't start with age's version line)");
    }
    preamble_bytes = start.bytes;
    preamble = Preamble::decode(std::span(preamble_bytes).first(start.got), in.name());
    bound = preamble_bytes;
    if (preamble.version == kUncommittedFormatVersion) {
      ikm = uncommitted_input_key(spec, preamble, in.name());
    } else {
      OpenedStanzas opened =
          open_stanzas(spec, preamble, preamble_bytes, read_v3_header(in, preamble_bytes.size()), in.name());
      stanzas_len = opened.header.length;
      ikm = std::move(opened.body_ikm);
    }
  } else {
    if (!spec.passphrase.empty()) {
      throw usage_error("the Tink format takes a raw key, not a passphrase", Remedy::key);
    }
    if (!spec.identities.empty()) throw usage_error("the Tink format takes a raw key, not identities", Remedy::key);
    check_sealed_params(spec.key.size(), spec.segment_len);
    preamble.key_len = static_cast<std::uint8_t>(spec.key.size());
    preamble.segment_len = spec.segment_len;
    ikm = spec.key.clone();
  }
  std::vector<std::uint8_t> header_bytes(StreamHeader::length(preamble.key_len));
  if (in.read_prefix(header_bytes) != header_bytes.size()) throw Error(in.name() + ": truncated header");
  const StreamHeader header = StreamHeader::decode(header_bytes, preamble.key_len);
  const SecretBytes segment_key = hkdf_sha256(ikm, header.salt, associated_data(spec, bound), preamble.key_len);
  OpenedHeader opened;
  opened.stream = std::make_shared<TinkSegments>(preamble.key_len, preamble.segment_len, segment_key,
                                                 header.nonce_prefix, segment_backend(backend));
  opened.body_offset = bound.size() + stanzas_len + header_bytes.size();
  opened.key_bits = preamble.key_len * 8u;
  opened.segment_len = preamble.segment_len;
  return opened;
}

TransformReport open(const SealedSpec& spec, const std::string& input_path,
                     const std::string& output_path, const TransformOptions& options) {
  JobRunner runner(options);
  InputEndpoint in(input_path, true, Armor::paes);
  if (in.armored() && options.engine == EngineKind::mpi) {
    throw usage_error(in.name() + " is armored (base64 text), which this process decodes; the mpi engine's "
                      "ranks read the binary file at offsets themselves: decode it first, or use another engine");
  }
  const OpenedHeader header = read_header(spec, in, options.backend.for_job_of(in.size()));
  const SegmentJob job(Direction::decrypt, header.stream);
  // A bare Tink stream has no preamble to give its segment size: a wrong one
  // makes a length no stream has, or fails segment 0 as a wrong key does.
  if (const auto size = in.size()) {
    try {
      job.chunk_count(*size - header.body_offset);
    } catch (const Error& e) {
      if (spec.format != SealedFormat::tink) throw;
      throw Error(in.name() + ": " + e.what() + "; a bare Tink stream opens only with the segment size it was "
                  "written with");
    }
  }

  OutputEndpoint out(output_path, output_options(options, Direction::decrypt, in), false);
  TransformReport report;
  report.chunk_len = header.segment_len;
  report.key_bits = header.key_bits;
  report.backend = job.backend().name;
  report.age = header.age;
  try {
    runner.run(job, in, header.body_offset, out, 0, report);
  } catch (const SegmentAuthenticationError& e) {
    if (spec.format != SealedFormat::tink || e.index() != 0) throw;
    throw Error(in.name() + ": authentication failed at segment 0: a bare Tink stream opens only with the key, "
                "associated data and segment size it was written with (or the data was corrupted)",
                ErrorKind::failure, Remedy::associated_data);
  }
  return report;
}

// Random access reads segments at their offsets in the binary file; in
// armor, a segment's place in the text could be computed, but a reader would
// still have to check the armor's every line before it to trust it.
InputEndpoint& refuse_armor(InputEndpoint& in) {
  if (in.armored()) {
    throw usage_error(in.name() + " is armored (base64 text): reading a part of it needs the binary file; "
                      "decrypt it whole, or decode it first");
  }
  return in;
}

// Segments [first, first + count) of an opening SegmentJob as a job of their
// own, so that an engine runs just them: chunk i is segment first + i, with
// its own index and last flag (its nonce), and offsets from the window's start.
class SegmentWindow final : public Job {
 public:
  SegmentWindow(const SegmentJob& body, std::uint64_t body_count, std::uint64_t first, std::uint64_t count)
      : body_(body), body_count_(body_count), first_(first), count_(count),
        in_base_(body.in_offset(first)), out_base_(body.chunk(first, 0, false).out_offset) {}

  bool parallel() const override { return true; }
  std::size_t lookback_len() const override { return 0; }
  std::uint64_t in_offset(std::uint64_t i) const override { return body_.in_offset(first_ + i) - in_base_; }
  std::uint64_t nominal_in_len(std::uint64_t i) const override { return body_.nominal_in_len(first_ + i); }
  Chunk chunk(std::uint64_t i, std::uint64_t in_len, bool) const override {
    Chunk c = body_.chunk(first_ + i, in_len, first_ + i + 1 == body_count_);
    c.in_offset -= in_base_;
    c.out_offset -= out_base_;
    return c;
  }
  std::size_t out_capacity(const Chunk& c) const override { return body_.out_capacity(c); }
  std::uint64_t chunk_count(std::uint64_t) const override { return count_; }
  std::unique_ptr<ChunkWorker> make_worker() const override { return body_.make_worker(); }
  SecretBytes ticket() const override { throw Error("internal: a segment window is not sent to MPI ranks"); }

 private:
  const SegmentJob& body_;
  std::uint64_t body_count_, first_, count_, in_base_, out_base_;
};

}  // namespace

std::uint64_t max_scrypt_memory() { return kMaxScryptMemory; }

SealedSpec SealedSpec::clone() const {
  SealedSpec copy;
  copy.direction = direction;
  copy.format = format;
  copy.key = key.clone();
  copy.passphrase = passphrase.clone();
  copy.key_len = key_len;
  copy.scrypt_log2_n = scrypt_log2_n;
  copy.aad = aad;
  copy.allow_uncommitted = allow_uncommitted;
  copy.segment_len = segment_len;
  copy.recipients = recipients;
  for (const Identity& identity : identities) copy.identities.push_back(identity.clone());
  copy.ui = ui;
  copy.plugin_batch = plugin_batch;
  return copy;
}

TransformReport run_sealed(const SealedSpec& spec, const std::string& input_path,
                           const std::string& output_path, const TransformOptions& options) {
  return spec.direction == Direction::encrypt ? seal(spec, input_path, output_path, options)
                                              : open(spec, input_path, output_path, options);
}

struct SealedReader::State {
  State(const SealedSpec& spec, const std::string& path, unsigned threads_wanted, const BackendChoice& backend)
      : in(path, false, Armor::paes), header(read_header(spec, refuse_armor(in), backend.for_job_of(in.size()))),
        job(Direction::decrypt, header.stream),
        threads(threads_wanted != 0 ? threads_wanted : online_cpus()) {}

  // A buffer for a window of segments' plaintext; not zeroed first, since
  // every byte used is written.
  struct Buffer {
    std::unique_ptr<std::uint8_t[]> bytes;
    std::size_t capacity = 0;
  };
  // The buffer of the last read is kept for the next: its pages are touched
  // already, and a fresh page costs a fault (~1.3 us on a VM: a segment's
  // worth takes as long as decrypting it). Reads that overlap in time take
  // fresh buffers. Sized for a whole batch of segments, so that the final
  // segment's check at opening leaves one the first read fits in (untouched
  // pages cost nothing).
  Buffer take_buffer(std::size_t capacity) const {
    {
      const std::lock_guard lock(spare_mutex);
      if (spare.bytes && spare.capacity >= capacity) return std::exchange(spare, {});
    }
    const std::size_t batch_capacity = static_cast<std::size_t>(batch() * job.nominal_in_len(1));
    const std::size_t reserve = std::max(capacity, batch_capacity);
    return {std::make_unique_for_overwrite<std::uint8_t[]>(reserve), reserve};
  }
  void give_back(Buffer&& buffer) const {
    const std::lock_guard lock(spare_mutex);
    if (buffer.capacity > spare.capacity || !spare.bytes) spare = std::move(buffer);
  }
  // About four segments per worker, as the threads engine fits chunks: a
  // segment takes ~50 us, and starting a thread team in a fresh process
  // costs more than a few of them (1 MiB at the middle of a file: 10.8 ms
  // on one thread, 19.4 ms on two, 2-core VM).
  // The batch's plaintext stays within the bytes a run may hold in flight
  // (engine/feed.hpp): the file's preamble sets the segment size, up to
  // 64 MiB, and 4 of those per thread would be 32 GiB at 128 threads, even
  // for a one-byte range.
  // And at least a worker's worth of bytes each (kMinBytesPerWorker: 16
  // segments of 64 KiB), or the engine would run the batch on fewer workers.
  static constexpr std::uint64_t kSegmentsPerWorker = 4;
  std::uint64_t segments_per_worker() const {
    const std::uint64_t segment = job.nominal_in_len(1);
    return std::max(kSegmentsPerWorker, (kMinBytesPerWorker + segment - 1) / segment);
  }
  std::uint64_t batch() const { return slots_within_budget(job, segments_per_worker() * threads, 1); }

  // Segments [first, first + count), decrypted and verified: their plaintext,
  // which starts at plaintext offset `start`. Its buffer goes back to the
  // spare when it ends.
  struct Plain {
    const State& owner;
    Buffer buffer;
    std::size_t size = 0;
    std::uint64_t start = 0;
    Plain(const State& s, Buffer b, std::uint64_t at) : owner(s), buffer(std::move(b)), start(at) {}
    Plain(const Plain&) = delete;
    Plain& operator=(const Plain&) = delete;
    ~Plain() { owner.give_back(std::move(buffer)); }
    const std::uint8_t* bytes() const { return buffer.bytes.get(); }
  };
  std::unique_ptr<Plain> segments(std::uint64_t first, std::uint64_t count) const {
    const SegmentWindow window(job, chunk_total, first, count);
    OffsetSource source(in_file(), header.body_offset + job.in_offset(first));
    const auto capacity = static_cast<std::size_t>(output_capacity(window, source.size()));
    auto plain = std::make_unique<Plain>(*this, take_buffer(capacity), job.chunk(first, 0, false).out_offset);
    MemorySink sink({plain->buffer.bytes.get(), capacity});
    // A full batch takes every thread, fewer segments proportionally fewer
    // (the budget may make a batch fewer than four segments a thread).
    const unsigned workers = workers_for_batch(count);
    const auto engine = make_engine(EngineKind::threads, workers);
    plain->size = static_cast<std::size_t>(engine->run(window, source, sink));
    std::uint64_t read = 0;
    for (std::uint64_t i = 0; i < count; ++i) read += chunk_of(window, source.size(), count, i).in_len;
    bytes_read += read;
    return plain;
  }
  unsigned workers_for_batch(std::uint64_t count) const {
    // (Never more than the segments, nor than their bytes pay for: the
    // engine runs no more workers than workers_within_bytes gives.)
    const auto share = static_cast<unsigned>(
        std::clamp<std::uint64_t>(count * threads / batch(), 1, std::min<std::uint64_t>(threads, count)));
    return workers_within_bytes(share, count, count * job.nominal_in_len(1));
  }
  // Segments at a time from `first` with `left` to go (see read_range).
  std::uint64_t batch_from(std::uint64_t left) const {
    return left < 2 * segments_per_worker() ? 1 : std::min(batch(), left);
  }
  // Hands plaintext [offset, offset + len) (within the plaintext) to `consume`
  // in order, a few segments per thread at a time: parallel, in bounded memory.
  void read_range(std::uint64_t offset, std::uint64_t len,
                  const std::function<void(std::span<const std::uint8_t>)>& consume) const {
    const std::uint64_t last = job.chunk_holding(offset + len - 1);
    for (std::uint64_t first = job.chunk_holding(offset), count = 0; first <= last; first += count) {
      // Fewer segments than two workers take run on one, so one at a time:
      // each then reuses the last one's buffer.
      count = batch_from(last - first + 1);
      const auto plain = segments(first, count);
      const std::uint64_t from = std::max(offset, plain->start);
      const std::uint64_t to = std::min(offset + len, plain->start + plain->size);
      if (to <= from) throw Error("internal: segments " + std::to_string(first) + "+ hold less than their size");
      consume({plain->bytes() + (from - plain->start), static_cast<std::size_t>(to - from)});
    }
  }
  InputFile& in_file() const { return const_cast<InputEndpoint&>(in).file(); }  // pread: no state

  InputEndpoint in;
  OpenedHeader header;
  SegmentJob job;
  unsigned threads;
  std::uint64_t chunk_total = 0;  // the body's chunks (segments; age: 16 chunks each)
  std::uint64_t plain_size = 0;
  mutable std::atomic<std::uint64_t> bytes_read{0};
  mutable std::mutex spare_mutex;
  mutable Buffer spare;
};

SealedReader::SealedReader(const SealedSpec& spec, const std::string& path, unsigned threads,
                           const BackendChoice& backend) {
  if (names_stdio(path) || names_stream(path)) {
    throw usage_error("random access needs a sealed file to read at offsets, not a pipe or stdin");
  }
  state_ = std::make_unique<State>(spec, path, threads, backend);
  State& s = *state_;
  const std::uint64_t size = s.in.size().value_or(0);
  const std::uint64_t body_len = size - std::min(size, s.header.body_offset);
  s.chunk_total = s.job.chunk_count(body_len);  // throws for a truncated body
  s.plain_size = s.job.plaintext_len(body_len);
  s.bytes_read += s.header.body_offset;
  s.segments(s.chunk_total - 1, 1);  // the final segment: a file cut at a boundary fails here
}

SealedReader::~SealedReader() = default;

std::uint64_t SealedReader::size() const { return state_->plain_size; }

std::uint64_t SealedReader::bytes_read() const { return state_->bytes_read.load(); }

std::uint32_t SealedReader::segment_size() const { return state_->header.segment_len; }

unsigned SealedReader::key_bits() const { return state_->header.key_bits; }

bool SealedReader::age() const { return state_->header.age; }

std::string SealedReader::backend_name() const { return state_->header.stream->backend().name; }

std::uint64_t SealedReader::input_bytes_of(std::uint64_t offset, std::uint64_t length) const {
  const State& s = *state_;
  const std::uint64_t body_len = s.in.size().value_or(0) - s.header.body_offset;
  const auto in_len = [&](std::uint64_t segment) { return chunk_of(s.job, body_len, s.chunk_total, segment).in_len; };
  std::uint64_t bytes = s.header.body_offset + in_len(s.chunk_total - 1);
  if (offset >= s.plain_size || length == 0) return bytes;
  const std::uint64_t last = s.job.chunk_holding(offset + std::min(length, s.plain_size - offset) - 1);
  for (std::uint64_t segment = s.job.chunk_holding(offset); segment <= last; ++segment) {
    if (segment + 1 != s.chunk_total) bytes += in_len(segment);
  }
  return bytes;
}

unsigned SealedReader::workers_for(std::uint64_t offset, std::uint64_t length) const {
  const State& s = *state_;
  if (offset >= s.plain_size || length == 0) return 1;
  const std::uint64_t first = s.job.chunk_holding(offset);
  const std::uint64_t last = s.job.chunk_holding(offset + std::min(length, s.plain_size - offset) - 1);
  return s.workers_for_batch(s.batch_from(last - first + 1));  // the first batch is the largest
}

std::size_t SealedReader::read_at(std::uint64_t offset, std::span<std::uint8_t> out) const {
  const State& s = *state_;
  if (offset >= s.plain_size || out.empty()) return 0;
  const std::uint64_t len = std::min<std::uint64_t>(out.size(), s.plain_size - offset);
  std::size_t filled = 0;
  s.read_range(offset, len, [&](std::span<const std::uint8_t> part) {
    std::memcpy(out.data() + filled, part.data(), part.size());
    filled += part.size();
  });
  return filled;
}

std::uint64_t SealedReader::read_range(std::uint64_t offset, std::uint64_t length,
                                       const std::function<void(std::span<const std::uint8_t>)>& consume) const {
  const State& s = *state_;
  if (offset >= s.plain_size || length == 0) return 0;
  const std::uint64_t len = std::min(length, s.plain_size - offset);
  s.read_range(offset, len, consume);
  return len;
}

bool looks_like_age_file(std::span<const std::uint8_t> start) {
  const auto look = recognize_foreign_format(start);
  return look && look->format == ForeignFormat::age;
}

SecretBytes open_age_bytes(const SealedSpec& spec, std::span<const std::uint8_t> file, const std::string& name) {
  std::vector<std::uint8_t> decoded;
  if (starts_with_armor(file)) {
    ArmorDecoder armor(Armor::paes, name);
    armor.decode(file, decoded);
    armor.finish(decoded);
    file = decoded;
  }
  const auto version = as_bytes(kAgeVersionLine);
  if (file.size() < version.size() || !std::equal(version.begin(), version.end(), file.begin())) {
    throw Error(name + ": not an age file (it doesn't start with age's version line)");
  }
  const StanzaHeader header = parse_stanza_header(file.subspan(version.size()), name);
  const SecretBytes file_key = open_age_stanzas(spec, header, version, name);
  const auto rest = file.subspan(version.size() + header.length);
  if (rest.size() < kAgePayloadNonceLen) throw Error(name + ": truncated: the file ends in its payload nonce");
  const auto payload = rest.subspan(kAgePayloadNonceLen);
  const SegmentJob job(Direction::decrypt,
                       std::make_shared<AgeChunks>(age_payload_key(file_key, rest.first(kAgePayloadNonceLen))));
  const std::uint64_t count = job.chunk_count(payload.size());
  // Straight into wiped memory, chunk by chunk: no engine buffer holds it.
  SecretBytes plain(payload.size());
  std::size_t plain_len = 0;
  const auto worker = job.make_worker();
  for (std::uint64_t i = 0; i < count; ++i) {
    const Chunk chunk = chunk_of(job, payload.size(), count, i);
    plain_len += worker->transform(chunk, plain.data() + chunk.out_offset, payload.data() + chunk.in_offset);
  }
  return SecretBytes(plain.data(), plain_len);
}

SealedKeyKind sealed_key_kind(const std::string& path) {
  if (names_stdio(path) || names_stream(path)) {  // the bytes read would be lost to the job that follows
    throw usage_error("sealed_key_kind reads a sealed file's preamble, and needs a file, not a pipe or stdin");
  }
  InputEndpoint in(path, false, Armor::paes);
  const FileStart start = read_file_start(in);
  if (start.age) return stanzas_key_kind(read_v3_header(in, kAgeVersionLine.size()), in.name());
  const Preamble preamble = Preamble::decode(std::span(start.bytes).first(start.got), in.name());
  switch (preamble.key_source) {
    case KeySource::raw_key: return SealedKeyKind::raw_key;
    case KeySource::scrypt_passphrase: return SealedKeyKind::passphrase;
    case KeySource::recipient_stanzas: break;
  }
  return stanzas_key_kind(read_v3_header(in, kPreambleLen), in.name());
}

TransformReport read_sealed_range(const SealedSpec& spec, const std::string& input_path,
                                  const std::string& output_path, const SealedRange& range,
                                  const TransformOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const SealedReader reader(spec, input_path, options.threads, options.backend);
  const std::uint64_t offset =
      range.from_end ? reader.size() - std::min(range.offset, reader.size()) : range.offset;
  if (offset > reader.size()) {
    throw Error("the range starts at byte " + std::to_string(offset) + ", past the end of the plaintext (" +
                std::to_string(reader.size()) + (reader.size() == 1 ? " byte)" : " bytes)"));
  }
  const std::uint64_t end =
      range.length ? std::min(reader.size(), offset + std::min(*range.length, reader.size() - offset))
                   : reader.size();
  InputEndpoint in(input_path, true);  // for the output's permissions, as a whole decryption's
  OutputEndpoint out(output_path, output_options(options, Direction::decrypt, in), false);
  reader.read_range(offset, end - offset, [&](std::span<const std::uint8_t> part) {
    out.write_prefix(part);
    if (options.progress) options.progress(part.size());
  });
  out.commit();
  TransformReport report;
  report.bytes_in = reader.input_bytes_of(offset, end - offset);
  report.bytes_out = end - offset;
  report.chunk_len = reader.segment_size();
  report.key_bits = reader.key_bits();
  report.age = reader.age();
  report.backend = reader.backend_name();
  report.engine = EngineKind::threads;
  report.workers = reader.workers_for(offset, end - offset);
  report.parallel = report.workers > 1;
  report.seconds = seconds_since(start);
  return report;
}

}  // namespace paes
