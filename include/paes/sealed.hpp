// The sealed format: authenticated, streaming, parallel (docs/FORMAT.md).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "paes/age_keys.hpp"
#include "paes/error.hpp"
#include "paes/foreign_format.hpp"
#include "paes/mode.hpp"
#include "paes/transform.hpp"
#include "paes/x25519_key.hpp"

namespace paes {

// What age plugins opened ahead for a data set's files (src/api/recipients.hpp).
class PluginBatch;

enum class SealedFormat {
  paes,  // the paes preamble, then a Tink AES-GCM-HKDF stream bound to it
  tink,  // a bare Tink AES-GCM-HKDF stream, associated data = aad
  // age v1 (C2SP age.md): age's header, then its ChaCha20-Poly1305 payload
  // in 64 KiB chunks, sealed and opened in parallel. Recipients or a
  // passphrase; no raw key, associated data or segment size. Opening with
  // SealedFormat::paes takes age files too, told by their version line.
  age,
};

// The highest scrypt cost (log2 N) a passphrase seals with and a file may
// ask for: age's limit. N = 2^22 takes 4 GiB; more is past the cap that
// bounds what a hostile file can make paes allocate.
inline constexpr std::uint8_t kMaxScryptLog2N = 22;

// That cap: the most memory, in bytes, scrypt may take when paes opens a file.
std::uint64_t max_scrypt_memory();

struct SealedSpec {
  Direction direction = Direction::encrypt;
  SealedFormat format = SealedFormat::paes;
  // Either a raw key (16 or 32 bytes) or a passphrase (paes format only),
  // which wraps a random file key in age's scrypt stanza (AES-256 body).
  SecretBytes key;
  SecretBytes passphrase;
  std::size_t key_len = 32;     // with a passphrase, when sealing: 32 only (a 16 is refused)
  std::uint8_t scrypt_log2_n = 18;  // with a passphrase, when sealing; at most kMaxScryptLog2N
  // Associated data: authenticated, not stored. The header's MAC covers it
  // (docs/FORMAT.md section 8.3), so opening with another fails there,
  // before any segment.
  std::vector<std::uint8_t> aad;
  // Opening files that do not commit to their key or associated data:
  // version 1 (a key or passphrase, sealed before version 3 took them), and
  // a recipients file whose header was sealed before it covered the
  // associated data. Such a file can be built to open to two plaintexts
  // under two keys or two associated data. Refused unless this is set; with
  // it, each opening notifies a warning (paes/notice.hpp).
  bool allow_uncommitted = false;
  std::uint32_t segment_len = 1u << 20;  // sealing, and opening a bare Tink stream
  // Public-key recipients (paes format only, docs/FORMAT.md section 8: format
  // version 3): sealing to recipients takes no key or passphrase; a random
  // 16-byte file key is wrapped to each of them in its type's age stanza
  // (X25519, ssh-ed25519, ssh-rsa, a plugin's; at most 4096 stanzas), so
  // whoever seals needs no secret that opens the file.
  std::vector<Recipient> recipients;
  // Opening a file sealed to recipients: identities, tried against the
  // header's stanzas (those that need no process or passphrase first, then
  // passphrase-protected ssh keys, then plugins, one session per plugin);
  // the first that unwraps a file key must also verify the header's MAC, or
  // the file is refused.
  std::vector<Identity> identities;
  // Whom plugins and passphrase-protected ssh keys ask (paes/recipient.hpp);
  // null: nobody, and what needs an answer fails.
  KeyUi* ui = nullptr;
  // The file keys age plugins unwrapped ahead for many files, one session per
  // plugin for all of them (run_sealed_data_set makes it, so that a hardware
  // key is touched once a set, not once a file); a file it holds no key for
  // runs its own sessions. Null: every file runs its own.
  std::shared_ptr<const PluginBatch> plugin_batch;

  // A copy (its secrets copied too, to be wiped by each).
  SealedSpec clone() const;
};

// Seals or opens input into output. Opening verifies every segment and
// detects truncation, reordering, extension and wrong keys; nothing appears
// under a file output's name unless all of it verified. To a stream, each
// segment is written only after it verified, and a failure throws after the
// verified segments before it were written. Throws Error.
TransformReport run_sealed(const SealedSpec& spec, const std::string& input_path,
                           const std::string& output_path, const TransformOptions& options);

// Random access to the plaintext of a sealed file (paes, age or bare Tink format;
// spec's direction is ignored). Opening it reads and authenticates the header
// and the final segment, so a truncated or foreign file, or a wrong key, is
// refused here; read_at() then reads, decrypts and verifies only the segments
// that hold the bytes asked for, on `threads` threads (0: every CPU), whose
// AES-GCM runs on `backend`'s CPU backend.
// Thread-safe: read_at may run in several threads at once. Throws Error; a
// usage Error when the input is not a file (a pipe can't be read at offsets).
class SealedReader {
 public:
  SealedReader(const SealedSpec& spec, const std::string& path, unsigned threads = 0,
               const BackendChoice& backend = {});
  ~SealedReader();
  SealedReader(const SealedReader&) = delete;
  SealedReader& operator=(const SealedReader&) = delete;

  // The plaintext's length.
  std::uint64_t size() const;
  // Fills `out` with plaintext from `offset` on. Returns the bytes filled:
  // all of `out`, fewer only where the plaintext ends (0 from size() on).
  // Throws Error when a segment it needs fails authentication.
  std::size_t read_at(std::uint64_t offset, std::span<std::uint8_t> out) const;
  // The same without a buffer of the caller's: hands the plaintext from
  // `offset` on, `length` bytes or up to its end, to `consume` in order, in
  // parts of a few segments per thread, each verified before it is handed
  // over. Returns the bytes handed over. On an Error, parts handed over
  // before it stay valid plaintext.
  std::uint64_t read_range(std::uint64_t offset, std::uint64_t length,
                           const std::function<void(std::span<const std::uint8_t>)>& consume) const;
  // Ciphertext bytes read so far (the header, the final segment, and each
  // segment every read_at needed), for reports.
  std::uint64_t bytes_read() const;
  // The file's segment size (ciphertext bytes per segment).
  std::uint32_t segment_size() const;
  // The AES key size the file was sealed with: 128 or 256 (an age file's
  // ChaCha20 key: 256).
  unsigned key_bits() const;
  // Whether the file is an age file.
  bool age() const;
  // The cipher backend its AES-GCM runs on (empty for an age file: its
  // ChaCha20-Poly1305 is OpenSSL's).
  std::string backend_name() const;
  // For a report of a read of plaintext [offset, offset + length): the
  // ciphertext bytes it stands on (the header, the segments holding the
  // range, and the final segment, each once), and the workers it runs on.
  std::uint64_t input_bytes_of(std::uint64_t offset, std::uint64_t length) const;
  unsigned workers_for(std::uint64_t offset, std::uint64_t length) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Changing who can open a file sealed to recipients (format version 3)
// without re-encrypting it: one of `identities` opens the header (its MAC
// verified), then the file is written again with a new header, the stanzas
// of `recipients` added to the file's own (`keep_recipients`) or replacing
// them, and every byte of the body unchanged: copied in the kernel where the
// input and output are files, with no cipher work on the body.
//
// Stanzas are anonymous, so removing a recipient means writing a list
// without it. That is not revocation: whoever could open the file before
// holds its file key, and with it (or a copy of the old header) still can.
// Re-encrypting the plaintext under a new file key is the revocation.
struct RekeySpec {
  std::vector<Identity> identities;
  std::vector<Recipient> recipients;
  KeyUi* ui = nullptr;
  bool keep_recipients = false;
  // The associated data the file was sealed with: the header's MAC covers
  // it, and the body is authenticated under it as it is copied.
  std::vector<std::uint8_t> aad;
};

struct RekeyReport {
  std::size_t recipients_before = 0;  // stanzas of the input's header
  std::size_t recipients_after = 0;
  std::uint64_t body_bytes = 0;       // copied unchanged, every segment authenticated
  bool copied_in_kernel = false;      // file to file: copy_file_range or its fallback
  double seconds = 0;
};

// Writes the re-keyed file to output_path (a file, committed as run_sealed's
// outputs are: complete or not at all; or "-" for stdout). Throws Error: the
// input is not a file sealed to recipients (a usage Error: a key or
// passphrase file is re-encrypted instead), no identity opens it, its header
// MAC fails (the associated data included), no recipient would be left, more
// than 4096, a segment of the body fails to authenticate (nothing is then
// left under a file output's name).
RekeyReport rekey_sealed(const RekeySpec& spec, const std::string& input_path, const std::string& output_path,
                         const TransformOptions& options);

// An age file held in memory, binary or armored (an identity file encrypted
// with `age -p` is one), opened as run_sealed opens one: its header with
// spec's passphrase or identities, its MAC, every chunk. The plaintext comes
// back in wiped memory, and never passes through other buffers. For small
// files: it runs on the calling thread. Throws Error as run_sealed; "<name>:
// not an age file" for other bytes.
SecretBytes open_age_bytes(const SealedSpec& spec, std::span<const std::uint8_t> file, const std::string& name);

// Whether `start`, a file's first bytes, is the start of an age file: its
// version line, or age's armor (after whitespace).
bool looks_like_age_file(std::span<const std::uint8_t> start);

// How a paes-format sealed file's key is given, read from its preamble and
// (version 3) its header's stanzas: a raw key, a passphrase, or X25519
// identities. For a file
// only (a stream would lose the bytes read). Throws Error for a file that is
// no paes sealed file, or can't be read.
enum class SealedKeyKind { raw_key, passphrase, identities };
SealedKeyKind sealed_key_kind(const std::string& path);

// A part of a sealed file's plaintext: `length` bytes (none: to the end; past
// the end: up to it) from `offset`, counted from the plaintext's start or,
// with from_end, back from its end. Counted from the end, the caller need not
// know the plaintext's size (only the file's header and final segment tell
// it); an offset beyond the start starts at the start, as `tail -c` does, and
// 0 is the empty range at the end.
struct SealedRange {
  std::uint64_t offset = 0;
  bool from_end = false;
  std::optional<std::uint64_t> length;
};

// `paes decrypt --range`: writes `range` of the plaintext of the sealed file
// at input_path to output_path (a file, committed as run_sealed's are, or "-"
// for stdout). An offset past the end, counted from the start, is an Error.
// options.progress hears of the plaintext bytes written (the range is what
// the job is about), not the input read.
TransformReport read_sealed_range(const SealedSpec& spec, const std::string& input_path,
                                  const std::string& output_path, const SealedRange& range,
                                  const TransformOptions& options);

}  // namespace paes
