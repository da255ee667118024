// rekey_sealed: a version-3 file's header rewritten, its body copied as it is.
#include <chrono>
#include <string>

#include "api/job_runner.hpp"
#include "api/recipients.hpp"
#include "cipher/x25519.hpp"
#include "format/sealed_format.hpp"
#include "format/x25519_stanza.hpp"
#include "paes/endpoint.hpp"
#include "paes/error.hpp"
#include "paes/sealed.hpp"
#include "util/elapsed.hpp"

namespace paes {
namespace {

// The body from the input's current position to its end, in order: for a
// stream, which can't be copied at offsets.
std::uint64_t copy_stream(InputEndpoint& in, OutputEndpoint& out) {
  constexpr std::size_t kPieceLen = std::size_t{1} << 20;
  std::vector<std::uint8_t> piece(kPieceLen);
  std::uint64_t copied = 0;
  while (const std::size_t got = in.read_prefix(piece)) {
    out.write_prefix(std::span(piece).first(got));
    copied += got;
  }
  return copied;
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
  // the decoder or encoder (copy_stream) instead of being shared in the kernel.
  InputEndpoint in(input_path, true, Armor::paes);
  std::array<std::uint8_t, kPreambleLen> preamble_bytes{};
  const std::size_t got = in.read_prefix(preamble_bytes);
  const Preamble preamble = Preamble::decode(std::span(preamble_bytes).first(got), in.name());
  if (preamble.key_source != KeySource::recipient_stanzas) {
    throw usage_error(in.name() + " was sealed with a " +
                      (preamble.key_source == KeySource::scrypt_passphrase ? "passphrase" : "key") +
                      ", not to recipients: only a file sealed to recipients can be re-keyed; decrypt it and "
                      "seal it again");
  }
  const OpenedStanzas opened = open_stanzas(spec.identities, preamble_bytes, in);

  std::vector<Stanza> stanzas;
  if (spec.keep_recipients) {
    // As they are, unknown types too; but an X25519 stanza that opening
    // never reached (it stopped at the one that opened) is checked as
    // opening checks it, so that no reader refuses the header written here.
    // A low-order share gives X25519 no secret whatever the scalar: the
    // identity at hand tells.
    stanzas = opened.header.stanzas;
    const X25519PublicKey identity_public = x25519_public_of(spec.identities.front());
    for (const Stanza& kept : stanzas) {
      if (kept.type == kX25519StanzaType) unwrap_x25519(kept, spec.identities.front(), identity_public, in.name());
    }
  }
  if (stanzas.size() + spec.recipients.size() > kMaxStanzas) {
    throw usage_error("at most " + std::to_string(kMaxStanzas) + " recipients, and this would make " +
                      std::to_string(stanzas.size() + spec.recipients.size()));
  }
  for (const X25519PublicKey& recipient : spec.recipients) stanzas.push_back(wrap_x25519(opened.file_key, recipient));
  const std::string header = encode_stanza_header(preamble_bytes, stanzas, opened.file_key);
  if (header.size() > kMaxHeaderLen) {
    throw Error("the re-keyed header would be " + std::to_string(header.size()) + " bytes, past the " +
                std::to_string(kMaxHeaderLen >> 20) + " MiB every reader accepts: keep fewer recipients");
  }

  OutputEndpoint out(output_path, output_options(options, Direction::encrypt, in), true,
                     options.armor ? Armor::paes : Armor::none);
  out.write_prefix(preamble_bytes);
  out.write_prefix({reinterpret_cast<const std::uint8_t*>(header.data()), header.size()});
  RekeyReport report;
  report.recipients_before = opened.header.stanzas.size();
  report.recipients_after = stanzas.size();
  const std::uint64_t body_offset = kPreambleLen + opened.header.length;
  if (in.random_access() && out.random_access()) {
    const std::uint64_t size = in.size().value_or(0);
    report.body_bytes = size - std::min(size, body_offset);
    copy_file_bytes(in.file(), body_offset, out.file().fd(), kPreambleLen + header.size(), report.body_bytes);
    report.copied_in_kernel = true;
  } else {
    report.body_bytes = copy_stream(in, out);
  }
  out.commit();
  report.seconds = seconds_since(start);
  return report;
}

}  // namespace paes
