// The library's front door: transform a whole input with one call. Inputs and
// outputs are file paths, or "-" / "" for stdin and stdout.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "paes/backend_choice.hpp"
#include "paes/engine.hpp"
#include "paes/io.hpp"
#include "paes/mode.hpp"
#include "paes/plan.hpp"

namespace paes {

struct TransformOptions {
  EngineKind engine = EngineKind::threads;
  unsigned threads = 0;  // 0: one per online CPU
  std::uint64_t chunk_len = ChunkPlan::kAutoChunkLen;  // or bytes, 16 to 1G (raw modes)
  bool force = false;  // overwrite an existing output
  // Permissions of a new output file, less the umask. Default: 0666 when
  // encrypting (ciphertext is not secret); when decrypting 0600, or the input
  // file's where they are stricter. Ciphertext that -f writes over a file
  // keeps the replaced file's permissions, owner and group (OutputOptions);
  // plaintext never does: it stays ours, with these permissions.
  std::optional<unsigned> output_mode;
  // Input bytes done, from any thread. An armored input's are its text's,
  // counted from the bytes decoded (65 characters for 48 bytes, its lines'
  // shape), so that they reach the file's size as a binary input's do.
  ProgressCallback progress;
  // What runs the job's AES (paes/backend.hpp): auto, the default, or a
  // backend by name with a GPU's device. The job resolves it once, when it
  // is made; jobs of one process may each have their own.
  BackendChoice backend;
  // Text armor (Armor in paes/armor.hpp). Encrypting: the output is written as
  // text, Armor::paes for the sealed format (and Tink), openssl enc -a's
  // for raw modes and the Salted__ format. Decrypting a raw mode: the input
  // is openssl enc -a's text. A sealed input in paes' armor is recognised
  // and decoded whatever this says.
  bool armor = false;
  // A file output gets the input file's access and modification times (a
  // data set's, as gzip gives them); otherwise the time it was written.
  bool keep_input_times = false;
};

struct TransformReport {
  std::uint64_t bytes_in = 0;
  std::uint64_t bytes_out = 0;
  unsigned workers = 0;
  bool parallel = false;  // it ran on more than one worker or rank (not just: its mode could)
  EngineKind engine = EngineKind::threads;  // the one that ran
  std::uint64_t chunk_len = 0;  // as the job used it: rounded down to whole blocks
  unsigned key_bits = 0;  // the AES key size, where the job learnt it (a sealed file's own); else 0
  double seconds = 0;  // open to commit, I/O included
  std::vector<Engine::RankTiming> ranks;  // per MPI rank (mpi engine only)
  std::string engine_choice;  // why auto chose the job's backend (a GPU or the CPU's), under gpu_where_faster
  std::string backend;        // what ran the job's AES (a backend's name); empty for an age file
  bool age = false;           // a sealed job in age's format: ChaCha20-Poly1305, OpenSSL's on the CPU
};

// Encrypts or decrypts input into output with a raw mode. Nothing appears
// under a file output's name unless the whole job succeeds. Throws Error.
TransformReport transform_file(const CipherSpec& spec, const std::string& input_path,
                               const std::string& output_path, const TransformOptions& options);

// openssl enc's passphrase format for raw modes: "Salted__" || 8-byte salt ||
// ciphertext, key and IV = PBKDF2-HMAC-SHA256(passphrase, salt, iterations)
// (Pbkdf2Key, paes/mode.hpp). spec.key and spec.iv are ignored: they are
// derived.
TransformReport transform_salted(const CipherSpec& spec, const Pbkdf2Key& pbkdf2,
                                 const std::string& input_path, const std::string& output_path,
                                 const TransformOptions& options);

// Transforms `in` into `out` (which must hold output_capacity() bytes: in.size(),
// plus 16 for padded encryption) and returns the output length. In place
// (out.data() == in.data()) works, except for CBC and CFB decryption, whose
// chunks read the ciphertext block before them: a usage Error, as is any
// other overlap of the two. options.progress hears of each chunk's input
// bytes. Under auto with gpu_where_faster, a GPU backend may run it
// (options.backend.device picks which); memory pinned for it (pin_memory)
// goes to the device by DMA.
std::uint64_t transform_memory(const CipherSpec& spec, std::span<std::uint8_t> out,
                               std::span<const std::uint8_t> in, const TransformOptions& options);

}  // namespace paes
