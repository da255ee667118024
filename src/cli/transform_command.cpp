// paes encrypt / paes decrypt: the sealed format by default, a raw AES mode
// with --mode. This file turns options into a SealedSpec or a CipherSpec,
// refuses combinations that make no sense, and reports the result.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/descriptors.hpp"
#include "cli/key_source.hpp"
#include "cli/progress.hpp"
#include "cli/say.hpp"
#include "cli/terminal_ui.hpp"
#include "paes/endpoint.hpp"
#include "paes/age_keys.hpp"
#include "paes/backend.hpp"
#include "paes/data_set.hpp"
#include "paes/engine.hpp"
#include "paes/error.hpp"
#include "paes/sealed.hpp"
#include "paes/transform.hpp"
#include "util/hex.hpp"
#include "util/printable.hpp"

namespace paes::cli {
namespace {

// How --passphrase-file is read, at the end of both commands' help.
constexpr const char* kPassphraseFileNote = R"TXT(A --passphrase-file's passphrase is its first line without the "\n" or "\r\n" ending.
With --pbkdf2 it is what 'openssl enc -pass file:' takes, so both derive the same key:
the first line without a "\n" (a '\r' before it stays), at most 1023 bytes, up to
a NUL byte; paes warns where that differs from the first line.)TXT";

constexpr const char* kEncryptFooter = R"TXT(Examples:
  # Sealed (authenticated AES-256-GCM, the default), with a key from 'paes keygen':
  paes keygen -o backup.key
  paes encrypt --key-file backup.key data.tar -o data.tar.paes
  pass show backup-key | paes encrypt --key-file - data.tar -o data.tar.paes   # the key on stdin
  # With a passphrase (scrypt), from a pipe to a pipe:
  tar c dir | paes encrypt --passphrase-file pass.txt > dir.tar.paes
  # To public-key recipients (age's keys): this machine needs no secret that can decrypt
  paes keygen --x25519 -o alice.key          # prints alice's recipient, age1... (age-keygen's work too)
  paes encrypt -r age1... -r age1... data.tar -o data.tar.paes
  paes encrypt -R recipients.txt data.tar -o data.tar.paes   # one recipient a line, '#' comments
  paes rekey -i alice.key --add -r age1... data.tar.paes -o data.tar.paes -f   # one more, body untouched
  # age's own format, on every core: 'age -d' and rage read it (no --aad or key file there)
  paes encrypt --format age -r age1... data.tar -o data.tar.age
  paes encrypt --format age -a --passphrase-file pass.txt notes.txt -o notes.txt.age
  # A bare Tink stream that Tink's StreamingAead reads:
  paes encrypt --format tink --key-file tink.key --aad "backup 2026" in -o out.tink
  # Raw AES-256-CTR, byte-identical to 'openssl enc -aes-256-ctr -K .. -iv ..':
  paes encrypt --mode ctr --key-file aes256.key --iv 00112233445566778899aabbccddeeff big.bin -o big.ctr
  # openssl's passphrase format: 'openssl enc -d -aes-256-cbc -pbkdf2' reads it
  paes encrypt --mode cbc --pbkdf2 --passphrase-env PASS notes.txt -o notes.enc
  # Data sets, files side by side on every core, each output beside its input:
  paes encrypt -r age1... --recursive photos          # photos/**/F -> F.paes, the originals kept
  find data -name '*.csv' -print0 | paes encrypt -R team.txt --files0-from -
  paes encrypt -r age1... *.log --suffix .paes --rm   # also when the glob matches one file

Input and output may be '-' or left out for stdin and stdout. A key, passphrase,
identity, recipients or --aad-file '-' reads stdin, once: the input is then a file.
The sealed format detects any change, truncation, reordering or wrong key.
Raw modes (--mode) have no integrity protection. ECB, CTR and the decryption
of CBC and CFB run on all threads; CBC and CFB encryption and OFB are
sequential by nature and run one cipher thread with I/O overlapped.
A file output appears under its name only when complete, with mode 0666 less
the umask.)TXT";

constexpr const char* kDecryptFooter = R"TXT(Examples:
  paes decrypt --key-file backup.key data.tar.paes -o data.tar
  paes decrypt --passphrase-file pass.txt < dir.tar.paes | tar x
  paes decrypt -i alice.key data.tar.paes -o data.tar      # sealed to recipients (-r); age-keygen's keys too
  pass show alice-identity | paes decrypt -i - data.tar.paes -o data.tar   # the identity on stdin
  paes decrypt -i alice.key data.tar.age -o data.tar       # age's files (binary or armored) by themselves
  paes decrypt -i alice.key.age data.tar.age -o data.tar   # an identity file age -p encrypted: asks its passphrase
  paes decrypt --format tink --key-file tink.key --aad-file context.bin in.tink -o in.bin
  paes decrypt --mode ctr --key-file aes256.key --iv 00112233445566778899aabbccddeeff big.ctr -o big.bin
  openssl enc -aes-256-ctr -pbkdf2 -pass env:PASS -in a -out a.enc
  paes decrypt --mode ctr --pbkdf2 --passphrase-env PASS a.enc -o a.dec

  paes decrypt --key-file backup.key --range 2G:1M data.tar.paes -o part.bin
  paes decrypt --key-file backup.key --range -1M data.tar.paes -o tail.bin   # the last MiB
  paes decrypt -i alice.key --recursive photos --output-dir restored   # restored/photos/**/F

Input and output may be '-' or left out for stdin and stdout. A key, passphrase,
identity or --aad-file '-' reads stdin, once: the input is then a file.
Sealed input (and age's) is verified segment by segment. To a file, nothing appears under
the output name unless every segment verified. To a pipe, each segment is
written only after it verified; on a failure paes stops, exits 1, and what it
wrote before is verified but incomplete: check the exit status.
Raw modes carry no integrity check: a wrong key or damaged data gives garbage,
except that ECB/CBC padding errors are reported as "bad decrypt".
A new output file is private: mode 0600 (or the input file's, where stricter),
less the umask.)TXT";

// What both directions' footers end with.
constexpr const char* kReplaceFooter = R"TXT(
One INPUT without -o is written to stdout, as age does. Two or more INPUTs, or
any of the data set's options, make a set: each output is written beside its
input (or under --output-dir), never to stdout, so a glob that may match one
file is made a set with --suffix. Files run side by side, a large one on every
thread; a file that fails gets one line and the others go on (exit status 1).
Each sealed file has its own file key; a passphrase costs one scrypt a file
(a second and 256 MiB each at the default cost; those side by side share half
the memory). A raw mode with a key refuses a set (every file would share its
key and IV): --pbkdf2 draws a salt a file. A set's outputs carry their inputs'
access and modification times, as gzip's do; an interrupted set (Ctrl-C)
keeps the files finished, removes the ones in flight, and exits 130.

An existing output, or a symbolic link in its place, is replaced only with -f
(a link is replaced, never followed). Ciphertext keeps the replaced file's mode,
owner and group; plaintext never does: it is a new, private file of yours.
Devices other than /dev/null need -f.
Sizes are bytes, or K, M, G, T (also KB, KiB, ...; any case): powers of 1024.)TXT";

CLI::Validator name_validator(bool (*valid)(std::string_view), std::string what, std::string choices) {
  return CLI::Validator(
      [=](std::string& name) -> std::string {
        if (valid(name)) return {};
        return "unknown " + what + " '" + name + "' (choose " + choices + ")";
      },
      "");
}

// PBKDF2's digests --md takes: openssl enc -md's common ones.
const std::vector<std::string> kPbkdf2Digests{"sha256", "sha512", "sha384", "sha224", "sha1", "md5"};

// Above kMaxScryptLog2N scrypt needs more memory than paes allows it when
// opening a file (the cap that keeps a hostile file from exhausting memory),
// so such a file could never be decrypted.
CLI::Validator scrypt_cost_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::string range = "must be 10 to " + std::to_string(kMaxScryptLog2N) + ", got " + text;
        unsigned value = 0;
        if (!CLI::detail::lexical_cast(text, value) || value < 10) return range;
        if (value > kMaxScryptLog2N) {
          return range + " (above " + std::to_string(kMaxScryptLog2N) + ", scrypt needs more than the " +
                 std::to_string(max_scrypt_memory() >> 30) + " GiB of memory paes allows it, so no paes could "
                 "decrypt the file)";
        }
        return {};
      },
      "");
}

bool valid_mode(std::string_view name) { return parse_mode(name).has_value(); }
bool valid_engine(std::string_view name) {
  return parse_engine(name).has_value() || name == kAutoEngine || names_gpu_backend(name);
}

// The engines and the GPU backends' short forms, for --engine's choices.
std::string engine_choices() {
  std::string names = engine_words();
  for (const CipherBackendName& row : cipher_backend_names()) {
    if (row.gpu && row.built_in) names += " " + row.name;
  }
  return names;
}
std::vector<std::string> mode_names() {
  std::vector<std::string> names;
  for (const Mode mode : kAllModes) names.emplace_back(mode_name(mode));
  return names;
}

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> list;
  std::istringstream in(text);
  for (std::string word; in >> word;) list.push_back(word);
  return list;
}

bool valid_format(std::string_view name) { return name == "paes" || name == "tink" || name == "age"; }

// Options that belong to the other kind of job are refused, not ignored.
// Refuses `option` when given. One that this command lacks (--range on
// encrypt) can't have been given.
void refuse(const CLI::App& command, const char* option, const char* why) {
  const CLI::Option* known = command.get_option_no_throw(option);
  if (known != nullptr && known->count() != 0) throw usage_error(std::string(option) + " " + why);
}

}  // namespace

// add_transform_command's builders, one per help heading or kind of option,
// called in the order their options appear in --help.
namespace {

// --mode and --format: which kind of job.
void add_mode_and_format_options(CLI::App& cmd, TransformArgs& args) {
  cmd.add_option("--mode,-m", args.mode,
                 "A raw AES mode instead of the sealed format: ecb, cbc, cfb, cfb8, cfb1, ofb or ctr")
      ->type_name("MODE")
      ->check(with_choices(name_validator(valid_mode, "mode", "ecb, cbc, cfb, cfb8, cfb1, ofb or ctr"), mode_names()));
  cmd.add_option("--format", args.format,
                 "Sealed format: paes (default; commits to its key and --aad), age (age v1 files, which age, rage "
                 "and paes open: recipients or a passphrase, ChaCha20-Poly1305 on the CPU, no --aad or "
                 "--segment-size; decrypt tells age files by themselves) or tink (a bare Tink stream, Tink's own: a "
                 "raw key, and no commitment: a crafted stream can open to other bytes under another key)")
      ->type_name("FORMAT")
      ->check(with_choices(name_validator(valid_format, "format", "paes, age or tink"), {"paes", "age", "tink"}));
}

// Where the key or passphrase comes from: at most one of them.
void add_key_options(CLI::App& cmd, TransformArgs& args) {
  // Plain options under a help heading, at most one checked once parsing is
  // done, rather than a CLI11 option group: a group is an unnamed subcommand,
  // and CLI11 2.1 takes an empty argument ('') for its name and then never
  // returns ("paes encrypt x '' -o y" hung; fuzz_cli_options found it).
  CLI::Option* const key_options[] = {
      cmd.add_option("--key-file,-k", args.keys.key_file, "File with the key: hex text, or 16/24/32 raw bytes that are not text; '-': standard input (the input must then be a file; a file named '-': ./-)")->type_name("PATH"),
      cmd.add_option("--key-env", args.keys.key_env, "Environment variable holding the key as hex")->type_name("VAR"),
      cmd.add_option("--key-hex", args.keys.key_hex, "Key as hex, raw modes only (visible to other users)")->type_name("HEX"),
      cmd.add_option("--passphrase-file", args.keys.passphrase_file, "File whose first line is the passphrase (with --pbkdf2: as openssl reads it, below); '-': standard input (the input must then be a file)")->type_name("PATH"),
      cmd.add_option("--passphrase-env", args.keys.passphrase_env, "Environment variable holding the passphrase")->type_name("VAR")};
  for (CLI::Option* option : key_options) {
    option->group("Key (at most one; default: ask for a passphrase; decrypt asks only for a file sealed with one)");
  }
  cmd.final_callback([key_options] {
    const auto given = std::count_if(std::begin(key_options), std::end(key_options),
                                     [](const CLI::Option* option) { return option->count() != 0; });
    if (given > 1) {
      throw CLI::ValidationError("give at most one of --key-file, --key-env, --key-hex, --passphrase-file "
                                 "and --passphrase-env");
    }
  });
}

// Public-key recipients replace the key: a usage error with any key option
// (sealed_spec), checked there so that the message can say why. Encrypt
// takes recipients (and, as age -e -i, identities for their own recipients),
// decrypt identities.
void add_recipient_options(CLI::App& cmd, bool enc, TransformArgs& args) {
  if (enc) {
    cmd.add_option("-i,--identity", args.identities,
                   "Sealed: encrypt to the recipient of this identity file (as age -e -i), so that it opens "
                   "the file; repeatable, with -r and -R too; '-': standard input (the input must then be a file)")
        ->type_name("PATH")
        ->allow_extra_args(false)
        ->group("Public-key recipients (instead of a key)");
    cmd.add_option("-r,--recipient", args.recipients,
                   "Sealed: encrypt to this recipient: age's X25519 (age1..., from 'paes keygen --x25519' or "
                   "age-keygen), an ssh public key (\"ssh-ed25519 AAAA...\" or ssh-rsa, as age takes them), or "
                   "an age plugin's (age1NAME1..., run by the program age-plugin-NAME on PATH); repeat for "
                   "several, at most 4096 in all; no key or passphrase")
        ->type_name("RECIPIENT")
        ->allow_extra_args(false)  // one value each time: "-r A in.txt" must not take in.txt too
        ->group("Public-key recipients (instead of a key)");
    cmd.add_option("-R,--recipients-file", args.recipients_files,
                   "Sealed: file of recipients, one a line ('#' comments and blank lines ignored; an "
                   "authorized_keys file's ssh keys of types age can't encrypt to are skipped with a warning); "
                   "repeatable; '-': standard input (the input to encrypt must then be a file)")
        ->type_name("PATH")
        ->allow_extra_args(false)
        ->group("Public-key recipients (instead of a key)");
  } else {
    cmd.add_option("-i,--identity", args.identities,
                   "Sealed to recipients: identity file: AGE-SECRET-KEY-1... lines (age-keygen, 'paes keygen "
                   "--x25519') or a plugin's AGE-PLUGIN-NAME-1... lines, or an ssh private key (~/.ssh/id_ed25519, "
                   "id_rsa; its passphrase asked only when the file names its key); repeatable, the first that "
                   "matches a recipient opens the file; '-': standard input (the input must then be a file)")
        ->type_name("PATH")
        ->allow_extra_args(false)
        ->group("Public-key recipients (instead of a key)");
  }
}

// The AES size of a passphrase's key (sealed and --pbkdf2), then what only a
// sealed job takes: associated data, the segment size and scrypt's cost.
void add_sealed_options(CLI::App& cmd, bool enc, TransformArgs& args) {
  cmd.add_option("--key-bits", args.key_bits,
                 enc ? "--pbkdf2: AES size of the passphrase's key, 128, 192 or 256 (default 256); a sealed "
                       "file sealed with a passphrase is AES-256"
                     : "--pbkdf2: the AES size the file was encrypted with, 128, 192 or 256 (default 256); a "
                       "sealed file records its own")
      ->type_name("BITS")
      ->check(with_choices(key_bits_validator(), {"128", "192", "256"}));
  add_associated_data_options(cmd, args.aad, args.aad_file);
  if (!enc) {
    cmd.add_flag("--allow-uncommitted", args.allow_uncommitted,
                 "Sealed: open a file that does not commit to its key or associated data, with a warning: "
                 "format version 1 (a key or passphrase, sealed by an older paes), or a recipients file sealed "
                 "with --aad before its header covered it. Such a file can be built to open to other bytes under "
                 "another key");
  }
  cmd.add_option_function<std::string>(
         "--segment-size", [&args](const std::string& text) { args.segment_len = size_value(text); },
         enc ? "Sealed: ciphertext segment size, from 41 bytes (57 with a 256-bit key) to 64M (default 1M); "
               "--format tink: the reader must be given it too"
             : "--format tink: the segment size the stream was written with (default 1M); a paes file "
               "records its own")
      ->type_name("SIZE")
      ->check(segment_size_validator());
  CLI::Option* scrypt_cost =
      cmd.add_option("--scrypt-log-n", args.scrypt_log2_n,
                     "Sealed, passphrase: scrypt cost as log2 N, 10 to " + std::to_string(kMaxScryptLog2N) +
                         " (default 18: 256 MiB and about a second; each step doubles both)")
          ->type_name("N");
  // Decrypt reads it from the file: hidden from its help, and refused there,
  // whatever its value, with that reason (sealed_spec) rather than CLI11's
  // "not expected".
  if (enc) {
    scrypt_cost->check(scrypt_cost_validator());
  } else {
    scrypt_cost->group("");
  }
}

// What only a raw mode takes: its IV, padding, and openssl's -pbkdf2.
void add_raw_mode_options(CLI::App& cmd, TransformArgs& args) {
  cmd.add_option("--iv", args.iv_hex, "Raw modes: IV as 32 hex digits (every mode but ECB)")->type_name("HEX");
  cmd.add_flag("--no-pad", args.no_pad, "ECB/CBC without PKCS#7 padding (input must be whole 16-byte blocks)");
  cmd.add_flag("--pbkdf2", args.pbkdf2, "Raw modes: openssl enc -pbkdf2's format (Salted__, key and IV from the passphrase)");
  cmd.add_option("--iter", args.iterations, "PBKDF2 iterations, 1 to 2^30 (default 10000, as openssl)")
      ->type_name("N")
      ->check(whole_number_validator(1u, 1u << 30));
  cmd.add_option("--md", args.md, "--pbkdf2: PBKDF2's digest, as openssl enc -md (default sha256)")
      ->type_name("DIGEST")
      ->check(with_choices(CLI::IsMember(kPbkdf2Digests).description(""), kPbkdf2Digests));
  cmd.add_flag("--nosalt", args.no_salt,
               "--pbkdf2: no Salted__ header and no salt, as openssl enc -nosalt (the same passphrase then gives "
               "the same key and IV for every file: avoid it but to read such files)");
  cmd.add_option("--salt", args.salt_hex,
                 "--pbkdf2: this salt (16 hex digits), kept outside the data: no Salted__ header is written or "
                 "read, as openssl enc -S")
      ->type_name("HEX");
  // openssl enc -p prints the key and IV: named here only to be refused with
  // the reason (a command line with it would otherwise get "not expected").
  cmd.add_flag("-p,-P", args.print_key, "")->group("");
}

// Who runs the job: the device, the engine, its threads, the backend and the
// chunk size.
void add_engine_options(CLI::App& cmd, TransformArgs& args) {
  cmd.add_option("--device", args.device,
                 "A GPU backend's device, by its index in 'paes info' (default: the first GPU; under mpi, each "
                 "rank the one of its rank on its node)")
      ->type_name("N");
  cmd.add_option("--engine", args.engine,
                 "Who splits the work: serial, threads, auto (threads, on a GPU backend where measured faster for "
                 "large jobs), mpi (under mpiexec); a GPU backend's name is short for threads on that backend. "
                 "Where built in: paes info")
      ->type_name("ENGINE")
      ->check(with_choices(name_validator(valid_engine, "engine", engine_choices()), words(engine_choices())))
      ->capture_default_str();
  cmd.add_option("--threads,-t", args.threads,
                 "Worker threads, 1 to 4096 (default: online CPUs; more than the CPUs is honoured; more than 1 is "
                 "refused with --engine serial, which has one worker); a job runs no more workers than its chunks, "
                 "nor than one per MiB of input, so a small job runs on one; on a GPU backend each drives its own "
                 "lane of the device")
      ->type_name("N")
      ->check(whole_number_validator(1u, 4096u));
  add_backend_option(cmd, args.backend);
  cmd.add_option_function<std::string>(
         "--chunk-size", [&args](const std::string& text) { args.chunk_len = size_value(text); },
         "Raw modes: bytes a worker takes at a time, 16 to 1G (default 1M, cfb8 64K, cfb1 16K; for files, down to a quarter of that so each thread gets 4 chunks)")
      ->type_name("SIZE")
      ->check(chunk_size_validator());
}

// Decrypt's --range: part of a sealed file's plaintext.
void add_range_option(CLI::App& cmd, TransformArgs& args) {
  cmd.add_option_function<std::string>(
         "--range",
         [&args](const std::string& text) { args.range = parse_range(text); },
         "Sealed: only plaintext bytes OFFSET to OFFSET+LENGTH (sizes: 4096, 64K, 1G; no LENGTH: to the "
         "end), reading and verifying just the segments that hold them and the last one. A '-' before "
         "OFFSET counts it back from the end (-1M: the last MiB; -4K:100: 100 bytes from 4 KiB before "
         "the end; more than the plaintext: from its start, as tail -c). A LENGTH past the end stops at "
         "the end; an OFFSET past it is an error. Input: a file, not a pipe")
      ->type_name("[-]OFFSET[:LENGTH]")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            return parse_range(text) ? std::string()
                                     : "'" + text +
                                           "' is not [-]OFFSET[:LENGTH] (examples: 1G:1M, 4096:100, 2G, -1M)";
          },
          ""));
}

// How the output is written: as text (-a), and over what already exists (-f).
void add_output_options(CLI::App& cmd, bool enc, TransformArgs& args) {
  cmd.add_flag("-a,--armor", args.armor,
               enc ? "Write text that may go to a terminal or an email: the sealed format (and --format tink) as "
                     "base64 lines between '-----BEGIN PAES ENCRYPTED FILE-----' and its END line, which decrypt "
                     "recognises by itself; raw modes and --pbkdf2 exactly as 'openssl enc -a' (64-column base64, "
                     "no markers), which decrypt reads only with -a. Not with --engine mpi"
                   : "Raw modes and --pbkdf2: the input is 'openssl enc -a' base64 text. (Sealed and Tink input "
                     "in paes' armor is recognised without it; --range needs the binary file)");
  cmd.add_flag("-f,--force", args.force,
               "Replace an existing output file or symbolic link (ciphertext keeps the file's mode, owner and "
               "group; plaintext stays private and yours); "
               "write a device in place");
}

// What paes says of the run: --json, -v and progress.
void add_report_options(CLI::App& cmd, TransformArgs& args) {
  cmd.add_flag("--json", args.json,
               "Print a JSON summary on stdout: direction, mode, key_bits, engine (the one that ran the AES, "
               "and auto's reason), backend (the CPU's AES library), threads (the workers that ran cipher "
               "work), parallel, chunk_size, bytes_in, bytes_out (binary bytes: an armored side counts the bytes "
               "before its base64), seconds, gbps (10^9 bytes/s); on a GPU, the pipeline's stages");
  cmd.add_flag("-v,--verbose", args.verbose, "Print a one-line summary on stderr");
  auto* progress = cmd.add_flag("--progress", args.progress,
                                "Show progress on stderr even when it is not a terminal (there: plain lines, one "
                                "each tenth of the work)");
  auto* no_progress = cmd.add_flag("--no-progress", args.no_progress, "Never show progress");
  progress->excludes(no_progress);
}

// The input and output paths.
void add_path_options(CLI::App& cmd, bool enc, TransformArgs& args) {
  cmd.add_option("input", args.inputs,
                 "Input file; '-' or none: stdin. A named pipe, <(...), or a file of /proc or /sys is read as a "
                 "stream, like stdin. Two or more make a data set (below): each written beside itself")
      ->type_name("INPUT...");
  cmd.add_option("-o,--output", args.output,
                 enc ? "Output file (written only when complete); '-' or none: stdout. A named pipe, >(...) or "
                       "/dev/stdout is written as a stream, like stdout. One input only"
                     : "Output file (written only when complete, mode 0600); '-' or none: stdout. A named pipe, "
                       ">(...) or /dev/stdout is written as a stream, like stdout. One input only")
      ->type_name("OUTPUT");
}

// Many files in one run, as gzip and zstd take them.
void add_data_set_options(CLI::App& cmd, bool enc, TransformArgs& args) {
  const char* const group = "Data sets: any of these, or two or more INPUTs, write each file's output beside it";
  cmd.add_flag("--recursive", args.recursive,
               enc ? "Encrypt the files in the directories named, and in theirs (symbolic links in them are not "
                     "followed; FIFOs, devices and sockets are skipped with a note; files already ending in the "
                     "suffix are skipped)"
                   : "Decrypt the files in the directories named, and in theirs, that end in the suffix (.paes "
                     "and .age); others are skipped")
      ->group(group);
  cmd.add_option("--files-from", args.files_from,
                 "Also the files named in this file, one a line (zstd's --filelist); '-': standard input")
      ->type_name("FILE")
      ->group(group);
  cmd.add_option("--files0-from", args.files0_from,
                 "Also the files named in this file, each ending in a NUL byte (find -print0); '-': standard input")
      ->type_name("FILE")
      ->group(group);
  cmd.add_option("--output-dir", args.output_dir,
                 "Write the outputs under this directory instead, at each input's path as named (made as needed)")
      ->type_name("DIR")
      ->group(group);
  cmd.add_option("--suffix", args.suffix,
                 enc ? "What each output's name adds to its input's (default .paes; --format age: .age, tink: "
                       ".tink; a raw mode: .enc)"
                     : "What an input's name must end in, removed to name its output (default .paes or .age; "
                       "--format tink: .tink; a raw mode: .enc)")
      ->type_name("SUFFIX")
      ->group(group);
  cmd.add_flag("--rm", args.remove_inputs,
               enc ? "Remove each input once its output is complete and durable (an input with other hard links "
                     "only with -f)"
                   : "Remove each input once its output is complete, verified and durable (an input with other "
                     "hard links only with -f)")
      ->group(group);
}

}  // namespace

CLI::App* add_transform_command(CLI::App& app, Direction direction, TransformArgs& args) {
  const bool enc = direction == Direction::encrypt;
  CLI::App* cmd = app.add_subcommand(std::string(direction_name(direction)),
                                     enc ? "Encrypt: sealed and authenticated by default, or a raw AES mode"
                                         : "Decrypt what paes encrypt, Tink or openssl enc wrote");
  cmd->footer(std::string(enc ? kEncryptFooter : kDecryptFooter) + "\n\n" + kPassphraseFileNote + "\n" + kReplaceFooter);
  add_mode_and_format_options(*cmd, args);
  add_key_options(*cmd, args);
  add_recipient_options(*cmd, enc, args);
  add_sealed_options(*cmd, enc, args);
  add_raw_mode_options(*cmd, args);
  add_engine_options(*cmd, args);
  if (!enc) add_range_option(*cmd, args);
  add_output_options(*cmd, enc, args);
  add_report_options(*cmd, args);
  add_path_options(*cmd, enc, args);
  add_data_set_options(*cmd, enc, args);
  return cmd;
}

namespace {

// What the summaries name the job by.
struct JobDescription {
  std::string mode;  // "sealed", "tink" or a raw mode's name
  unsigned key_bits = 0;
  std::string backend;  // the CPU AES library the job chose
};

ProgressMode progress_mode(const TransformArgs& args) {
  if (args.no_progress) return ProgressMode::never;
  if (args.progress) return ProgressMode::always;
  // Plaintext printed on the terminal: a line drawn among it would stay there.
  const bool output_on_stdout = names_stdio(args.output) || descriptor_named(args.output) == STDOUT_FILENO;
  if (output_on_stdout && ::isatty(STDOUT_FILENO)) return ProgressMode::never;
  if (descriptor_named(args.output) == STDERR_FILENO) return ProgressMode::never;  // the output is on stderr
  return ProgressMode::automatic;
}

// Refuses what neither kind of job takes, before a key is read or a file opened.
void check_transform_usage(const TransformArgs& args, EngineKind engine) {
  refuse_own_descriptor(args.input, "input");
  refuse_own_descriptor(args.output, "-o");
  if (args.json && (names_stdio(args.output) || descriptor_named(args.output) == STDOUT_FILENO)) {
    throw usage_error("--json prints on stdout, which carries the output: give -o FILE");
  }
  if ((args.verbose || args.progress) && descriptor_named(args.output) == STDERR_FILENO) {
    throw usage_error("-v and --progress write on stderr, which carries the output: give -o FILE");
  }
  if (args.armor && engine == EngineKind::mpi) {
    throw usage_error("-a's text is encoded and decoded by this process's threads, and the mpi engine's ranks "
                      "read and write the files at offsets themselves: drop --engine mpi or -a");
  }
  if (names_stdio(args.input) || names_stream(args.input) || names_stdio(args.output) ||
      names_output_stream(args.output)) {
    check_streams(engine);
  }
}

// What --engine and --backend ask for: the engine, and the backend as a
// value that every job of this command carries. --engine auto is the threads
// engine under auto with its GPU policy; --engine NAME of a GPU backend the
// threads engine on that backend (refusing a --backend that says otherwise).
// --device goes with the GPU it picks.
struct EngineAndBackend {
  EngineKind engine = EngineKind::threads;
  BackendChoice backend;
};

// --backend, or where the command line gives none, PAES_BACKEND. Read here,
// by encrypt and decrypt, which take a backend: as CLI11's envname it was
// checked by every command, and a bad value failed 'paes --help' naming an
// option nobody typed. A bad value is named as the variable's.
std::string backend_asked(const TransformArgs& args, const CLI::App& command) {
  const char* variable = std::getenv("PAES_BACKEND");
  if (command.count("--backend") != 0 || variable == nullptr || *variable == '\0') return args.backend;
  const std::string name = variable;
  std::string names(kAutoBackend);
  bool known = name == kAutoBackend;
  for (const CipherBackendName& row : cipher_backend_names()) {
    names += ", " + row.name;
    known = known || row.name == name;
  }
  if (!known) throw usage_error("PAES_BACKEND=" + printable(name) + " is not a backend: choose " + names);
  return name;
}

EngineAndBackend resolve_engine(const TransformArgs& args, const CLI::App& command) {
  EngineAndBackend resolved;
  const std::string backend = backend_asked(args, command);
  resolved.backend.name = backend;
  if (const std::optional<EngineKind> engine = parse_engine(args.engine)) {
    resolved.engine = *engine;
  } else if (args.engine == kAutoEngine) {
    resolved.backend.gpu_where_faster = true;
  } else {
    if (backend != kAutoBackend && backend != args.engine) {
      throw usage_error("--engine " + args.engine + " runs the " + args.engine + " backend: drop --backend " +
                        backend);
    }
    resolved.backend.name = args.engine;
  }
  resolved.backend.device = args.device;
  return resolved;
}

// Refuses a backend this machine can't run, and a --device with no GPU to
// pick, before a key is read.
void check_backend(const BackendChoice& backend) {
  if (backend.device && !names_gpu_backend(backend.name) && !backend.auto_may_take_a_gpu()) {
    throw usage_error("--device picks a GPU: it goes with a GPU backend (--backend or --engine) or --engine auto");
  }
  check_backend_choice(backend);
}

// The front doors' options from the command line, less the progress callback.
TransformOptions transform_options(const TransformArgs& args, const EngineAndBackend& resolved) {
  TransformOptions options;
  options.engine = resolved.engine;
  options.backend = resolved.backend;
  options.threads = args.threads;
  options.chunk_len = args.chunk_len;
  options.force = args.force;
  options.armor = args.armor;
  return options;
}

// The sealed format's spec, with its key or passphrase; refuses raw-mode options.
SealedSpec sealed_spec(Direction direction, const TransformArgs& args, const CLI::App& command) {
  const bool encrypt = direction == Direction::encrypt;
  for (const char* option : {"--iv", "--no-pad", "--pbkdf2", "--iter", "--md", "--nosalt", "--salt", "--chunk-size",
                             "--key-hex"}) {
    refuse(command, option, "is for raw modes (--mode); the sealed format doesn't take it");
  }
  if (!encrypt && args.format == "paes") {
    refuse(command, "--segment-size", "is read from the paes file's preamble: drop it");
  }
  SealedSpec spec;
  spec.direction = direction;
  spec.format = args.format == "tink" ? SealedFormat::tink : args.format == "age" ? SealedFormat::age
                                                                                  : SealedFormat::paes;
  if (spec.format == SealedFormat::age) {
    // age's format has no place for them: refused, not dropped.
    refuse(command, "--aad", "has no place in age's format");
    refuse(command, "--aad-file", "has no place in age's format");
    refuse(command, "--segment-size", "has no place in age's format: its chunks are 64 KiB");
    refuse(command, "--key-bits", "has no place in age's format: ChaCha20 has one key size");
    if (args.keys.has_key()) {
      throw usage_error("age's format takes recipients (-r, -R, -i) or a passphrase, not a key file: use the paes "
                        "format for a raw key");
    }
  }
  spec.aad = load_associated_data(args.aad, args.aad_file);
  spec.allow_uncommitted = args.allow_uncommitted;
  spec.segment_len = static_cast<std::uint32_t>(std::min<std::uint64_t>(args.segment_len, UINT32_MAX));
  spec.scrypt_log2_n = static_cast<std::uint8_t>(args.scrypt_log2_n);
  if (!encrypt) {
    refuse(command, "--key-bits", "is read from the sealed file (or the key's length): drop it");
    refuse(command, "--scrypt-log-n", "is read from the sealed file (its scrypt stanza): drop it");
  }
  const bool to_recipients =
      !args.recipients.empty() || !args.recipients_files.empty() || (encrypt && !args.identities.empty());
  if (to_recipients || !args.identities.empty()) {
    const std::string what = to_recipients ? "recipients (-r, -R, -i)" : "identities (-i)";
    if (args.keys.has_key() || !args.keys.passphrase_file.empty() || !args.keys.passphrase_env.empty()) {
      throw usage_error(what + " can't be combined with --key-file, --key-env, --key-hex or a passphrase: "
                        "a file is sealed either to recipients or with a key or passphrase");
    }
    if (spec.format == SealedFormat::tink) {
      throw usage_error(what + " need the paes format (or age's), not --format tink");
    }
    refuse(command, "--key-bits", "doesn't go with recipients: their files are always AES-256");
    refuse(command, "--scrypt-log-n", "sets a passphrase's scrypt cost; recipients need none");
    spec.ui = &terminal_ui();
    if (to_recipients) {
      spec.recipients = load_recipients(args.recipients, args.recipients_files);
      // Encrypting, -i stands for its identities' own recipients (age -e -i).
      for (const Identity& identity : load_identities(args.identities)) spec.recipients.push_back(identity.recipient());
    } else {
      spec.identities = load_identities(args.identities);
    }
    return spec;
  }
  if (args.keys.has_key()) {
    refuse(command, "--key-bits", "sets a passphrase's key size; a key's size is its length");
    refuse(command, "--scrypt-log-n", "sets a passphrase's scrypt cost; a key needs none");
    spec.key = load_key(args.keys);
    if (spec.key.size() != 16 && spec.key.size() != 32) {
      throw Error("the sealed format takes a 16- or 32-byte key (AES-128 or AES-256), this key has " +
                  std::to_string(spec.key.size()) + " bytes");
    }
  } else {
    // Before any passphrase is read or prompted for: a prompt (twice, when
    // encrypting) would only end in this refusal.
    if (spec.format == SealedFormat::tink) {
      const bool passphrase_given = !args.keys.passphrase_file.empty() || !args.keys.passphrase_env.empty();
      throw usage_error(std::string("the Tink format takes a raw key") +
                        (passphrase_given ? ", not a passphrase" : "") + ": give --key-file or --key-env");
    }
    if (args.key_bits != 0 && args.key_bits != 256) {
      throw usage_error("a passphrase seals an AES-256 file (its scrypt stanza wraps a random file key, as age's): "
                        "drop --key-bits, or seal AES-128 with a 16-byte key (--key-file)");
    }
    spec.key_len = 32;
    const bool would_prompt = args.keys.passphrase_file.empty() && args.keys.passphrase_env.empty();
    if (!encrypt && would_prompt && spec.format != SealedFormat::tink && !names_stdio(args.input) &&
        !names_stream(args.input)) {
      // Ask for a passphrase only for a file sealed with one: a prompt for a
      // file that needs a key or an identity would only end in an error.
      switch (sealed_key_kind(args.input)) {
        case SealedKeyKind::raw_key:
          throw usage_error(args.input + " is sealed with a raw key: give --key-file or --key-env");
        case SealedKeyKind::identities:
          throw usage_error(args.input + " is sealed to X25519 recipients: give -i IDENTITY-FILE");
        case SealedKeyKind::passphrase:
          break;
      }
    }
    spec.passphrase = load_passphrase(args.keys, encrypt, PassphraseFileRule::first_line);
  }
  return spec;
}

// A raw mode's spec without its key and IV; refuses sealed-format options and
// notes a sequential direction given threads.
CipherSpec raw_spec(Direction direction, const TransformArgs& args, const CLI::App& command, EngineKind engine) {
  for (const char* option : {"--aad", "--aad-file", "--segment-size", "--scrypt-log-n", "--range", "--recipient",
                             "--recipients-file", "--identity", "--allow-uncommitted"}) {
    refuse(command, option, "is for the sealed format; raw modes (--mode) don't take it");
  }
  if (command.count("--format") != 0) throw usage_error("--format is for the sealed format, not raw modes (--mode)");
  CipherSpec spec;
  spec.mode = *parse_mode(args.mode);
  spec.direction = direction;
  spec.padding = !args.no_pad;
  if (engine == EngineKind::threads && args.threads > 1 && !is_parallel(spec.mode, direction)) {
    say("paes: note: " + std::string(mode_name(spec.mode)) +
        (direction == Direction::encrypt ? " encryption" : " decryption") +
        " is sequential by nature; it runs on one cipher thread with reads and writes overlapped\n");
  }
  return spec;
}

// --pbkdf2 (openssl's Salted__ format): the passphrase and PBKDF2 parameters
// that give the key and IV; refuses a key and an IV.
Pbkdf2Key salted_key(Direction direction, const TransformArgs& args, const CLI::App& command) {
  if (args.keys.has_key()) throw usage_error("--pbkdf2 derives the key from a passphrase: drop the key option");
  refuse(command, "--iv", "is derived by --pbkdf2 from the passphrase: drop it");
  std::optional<std::array<std::uint8_t, 8>> salt;
  if (command.count("--salt") != 0) {
    if (args.no_salt) throw usage_error("--salt and --nosalt: one of them");
    const auto bytes = args.salt_hex.size() == 16 ? decode_hex(args.salt_hex) : std::nullopt;
    if (!bytes) throw usage_error("--salt takes 16 hex digits (8 bytes, as openssl enc -S), got " +
                                  std::to_string(args.salt_hex.size()) + " characters");
    salt.emplace();
    std::copy_n(bytes->data(), salt->size(), salt->begin());
  }
  // openssl's own rule for a passphrase file, or openssl and paes would
  // derive different keys from the same file.
  Pbkdf2Key key;
  key.passphrase = load_passphrase(args.keys, direction == Direction::encrypt, PassphraseFileRule::openssl);
  key.iterations = args.iterations;
  key.key_len = (args.key_bits == 0 ? 256 : args.key_bits) / 8u;
  key.digest = args.md;
  key.no_salt = args.no_salt;
  key.salt = salt;
  return key;
}

// A raw mode's own key and IV, into `spec`; refuses the passphrase options.
void add_raw_key(CipherSpec& spec, const TransformArgs& args, const CLI::App& command) {
  if (!args.keys.has_key()) {
    throw usage_error("a raw mode needs a key (--key-file, --key-env or --key-hex), or --pbkdf2 with a passphrase");
  }
  for (const char* option : {"--iter", "--md", "--nosalt", "--salt"}) refuse(command, option, "goes with --pbkdf2");
  refuse(command, "--key-bits", "sets a passphrase's key size; a key's size is its length");
  spec.iv = parse_iv(spec.mode, args.iv_hex);
  spec.key = load_key(args.keys);
}

// A GPU backend asked for (--backend, or --engine NAME) that doesn't run
// `what`: the job runs on the CPU's backend `ran`, said, as the -v line alone
// would leave someone who asked for a GPU thinking it ran there.
void note_run_on_the_cpu(const BackendChoice& asked, const std::string& what, const std::string& ran) {
  if (!names_gpu_backend(asked.name) || ran == asked.name) return;
  say("paes: note: the " + asked.name + " backend doesn't run " + what + ": it runs on the CPU" +
      (ran.empty() ? "" : " (" + ran + ")") + "\n");
}

// The CPU backend auto runs a sealed job on `input` with: it depends on the
// job's size (CipherBackend::auto_min_job_len), so for a set, whose files
// differ, none is named ("").
std::string sealed_cpu_backend(const BackendChoice& choice, const std::string& input, bool set) {
  if (set) return {};
  std::optional<std::uint64_t> size;
  std::error_code ec;
  if (!names_stdio(input) && std::filesystem::is_regular_file(input, ec)) {
    const std::uintmax_t bytes = std::filesystem::file_size(input, ec);
    if (!ec) size = bytes;
  }
  return segment_backend_name(choice.for_job_of(size));
}

// age's payload is ChaCha20-Poly1305, which only OpenSSL on the CPU runs:
// a backend asked for (by --backend, --engine NAME or PAES_BACKEND) is not
// what runs it, and the user is told so.
void note_age_runs_on_the_cpu(const BackendChoice& asked) {
  if (asked.name == kAutoBackend) return;
  say("paes: note: the " + asked.name + " backend doesn't apply to age's format: its ChaCha20-Poly1305 runs on "
      "the CPU (openssl)\n");
}

// The job the options describe, made once (its key read, its passphrase
// asked), for one file or each file of a set.
struct PreparedJob {
  FileJob run;  // input path, output path, options
  JobDescription description;
  // A whole sealed file's spec, for run_sealed_data_set (which opens a set's
  // files with one session per age plugin); null for the others.
  std::shared_ptr<const SealedSpec> sealed;
};

// Builds the spec the options describe and binds it to its front door.
// `args.input` is the input a passphrase prompt is decided by (a set's first).
PreparedJob prepare_job(Direction direction, const TransformArgs& args, const CLI::App& command,
                        const TransformOptions& options) {
  PreparedJob job;
  JobDescription& description = job.description;
  if (args.mode.empty()) {
    const auto spec = std::make_shared<const SealedSpec>(sealed_spec(direction, args, command));
    description.mode = spec->format == SealedFormat::tink ? "tink" : "sealed";
    // The report names what ran the AES-GCM: under auto, that depends on each
    // file's size (a small one never loads ipsec-mb), so it is not asked here.
    if (spec->format == SealedFormat::age) {
      description.backend = "openssl";
      note_age_runs_on_the_cpu(options.backend);
    } else if (names_gpu_backend(options.backend.name)) {
      note_run_on_the_cpu(options.backend, "the sealed format (AES-GCM)", segment_backend_name(options.backend));
    }
    const bool public_key = !spec->recipients.empty() || !spec->identities.empty();  // always AES-256
    description.key_bits =
        public_key ? 256u : static_cast<unsigned>((spec->passphrase.empty() ? spec->key.size() : spec->key_len) * 8);
    if (args.range) {
      if (options.engine != EngineKind::threads) {
        throw usage_error("--range runs on the threads engine: drop --engine " +
                          std::string(engine_name(options.engine)));
      }
      job.run = [spec, range = *args.range](const std::string& in, const std::string& out,
                                            const TransformOptions& file_options) {
        return read_sealed_range(*spec, in, out, range, file_options);
      };
      return job;
    }
    job.run = [spec](const std::string& in, const std::string& out, const TransformOptions& file_options) {
      return run_sealed(*spec, in, out, file_options);
    };
    job.sealed = spec;
    return job;
  }
  auto spec = std::make_shared<CipherSpec>(raw_spec(direction, args, command, options.engine));
  description.mode = std::string(mode_name(spec->mode));
  // The report names what ran the AES, as for the sealed format above.
  if (names_gpu_backend(options.backend.name)) {
    note_run_on_the_cpu(options.backend,
                        std::string(mode_name(spec->mode)) +
                            (direction == Direction::encrypt ? " encryption" : " decryption"),
                        raw_backend_name(options.backend, spec->mode, spec->direction));
  }
  if (args.pbkdf2) {
    const auto pbkdf2 = std::make_shared<const Pbkdf2Key>(salted_key(direction, args, command));
    description.key_bits = static_cast<unsigned>(pbkdf2->key_len * 8);
    job.run = [spec, pbkdf2](const std::string& in, const std::string& out, const TransformOptions& file_options) {
      return transform_salted(*spec, *pbkdf2, in, out, file_options);
    };
    return job;
  }
  add_raw_key(*spec, args, command);
  description.key_bits = spec->key_bits();
  job.run = [spec](const std::string& in, const std::string& out, const TransformOptions& file_options) {
    return transform_file(*spec, in, out, file_options);
  };
  return job;
}

// What paes options read a file given as a paes file that is another
// format paes reads ("" for one it doesn't).
std::string how_to_read(ForeignFormat format) {
  switch (format) {
    case ForeignFormat::openssl_salted: return ": decrypt it with --mode <mode> --pbkdf2";
    case ForeignFormat::likely_tink_stream: return ": decrypt it with --format tink --segment-size <size>";
    case ForeignFormat::age:
    case ForeignFormat::openpgp: break;
  }
  return "";
}

double gbps(const TransformReport& report) {
  return report.seconds > 0 ? static_cast<double>(report.bytes_in) / report.seconds / 1e9 : 0.0;
}

// -v: one line on stderr.
void print_summary_line(Direction direction, const JobDescription& description, const TransformReport& report) {
  // Built whole and written at once (cli/say.hpp).
  std::ostringstream text;
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.3f s (%.2f GB/s)", report.seconds, gbps(report));
  text << "paes: " << (direction == Direction::encrypt ? "encrypted " : "decrypted ") << format_size(report.bytes_in)
       << " -> " << format_size(report.bytes_out) << " in " << rate << ", " << description.mode
       << (description.mode == "age" ? " ChaCha20-Poly1305" : " AES-" + std::to_string(description.key_bits))
       << ", " << engine_name(report.engine) << " engine, " << report.workers
       << (report.workers == 1 ? " worker" : " workers");
  text << ", " << (report.backend.empty() ? description.backend : report.backend) << '\n';
  if (!report.engine_choice.empty()) text << "paes: " << report.engine_choice << '\n';
  // Which GPU each MPI rank drove, and what ran where a rank's host had none.
  const auto on_device = [](const Engine::RankTiming& r) { return r.device.has_value(); };
  if (std::any_of(report.ranks.begin(), report.ranks.end(), on_device)) {
    for (std::size_t rank = 0; rank < report.ranks.size(); ++rank) {
      const Engine::RankTiming& r = report.ranks[rank];
      text << "paes: rank " << rank << ": " << r.backend;
      if (r.device) text << " device " << *r.device;
      text << '\n';
    }
  }
  say(text.str());
}

// What a job is named by once its file was read: a sealed file's own key
// size, and age's format for an age file.
JobDescription described_by_the_file(JobDescription description, const TransformReport& report) {
  if (report.key_bits != 0) description.key_bits = report.key_bits;
  if (report.age) {
    description.mode = "age";
    description.backend = "openssl";
  }
  return description;
}

// --json's object, with a list of ranks under MPI.
nlohmann::json json_summary(Direction direction, const JobDescription& description, const TransformReport& report) {
  nlohmann::json out = {
      {"mode", description.mode},
      {"key_bits", description.key_bits},
      {"direction", direction_name(direction)},
      {"engine", engine_name(report.engine)},
      {"threads", report.workers},
      {"parallel", report.parallel},
      {"chunk_size", report.chunk_len},
      {"bytes_in", report.bytes_in},
      {"bytes_out", report.bytes_out},
      {"seconds", report.seconds},
      {"gbps", gbps(report)},
  };
  if (!report.engine_choice.empty()) out["engine_choice"] = report.engine_choice;  // auto's reason
  out["backend"] = report.backend.empty() ? description.backend : report.backend;
  if (!report.ranks.empty()) {
    out["ranks"] = nlohmann::json::array();
    for (const auto& r : report.ranks) {
      nlohmann::json rank = {{"compute_seconds", r.compute_seconds},
                             {"io_seconds", r.io_seconds},
                             {"bytes_in", r.bytes_in},
                             {"threads", r.threads},
                             {"backend", r.backend}};
      if (r.device) rank["device"] = *r.device;
      out["ranks"].push_back(std::move(rank));
    }
  }
  return out;
}

// --json: one object on stdout.
void print_json_summary(Direction direction, const JobDescription& description, const TransformReport& report) {
  std::cout << json_summary(direction, description, report).dump() << '\n';
}

// A file that grew while it was read (a log still being written) was read to
// the size it had when the job opened it, as the plan is made from it; what
// was added is not in the output, and a sealed output authenticates the
// shorter file as complete. Said, as tar says "file changed as we read it".
// `input` is the file read (held open: after -o INPUT -f, or a log rotated,
// the path names another file); `read` is the most the job took of it.
void warn_if_input_grew(const InputFile& input, const std::string& path, std::uint64_t read) {
  struct stat st {};
  if (::fstat(input.fd(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  const auto size_now = static_cast<std::uint64_t>(st.st_size);
  if (size_now <= read) return;
  say("paes: warning: " + printable(path) + " grew while it was read (" + std::to_string(read) +
      " bytes when it was opened, " + std::to_string(size_now) + " now): what came after the first " +
      std::to_string(read) + " bytes is not in the output\n");
}


// Whether the command line names a data set: two or more inputs, or any of
// the options that only a set takes (so that a glob matching one file, with
// --suffix or --output-dir, is still written beside itself, not to stdout).
bool names_a_set(const TransformArgs& args, const CLI::App& command) {
  return args.inputs.size() >= 2 || args.recursive || !args.files_from.empty() || !args.files0_from.empty() ||
         !args.output_dir.empty() || command.count("--suffix") != 0 || args.remove_inputs;
}

// Refuses what a data set can't take, before a key is read or a file opened.
void check_set_usage(const TransformArgs& args, const CLI::App& command, EngineKind engine) {
  if (command.count("--output") != 0) {
    throw usage_error("-o names one output, and this is a data set (several inputs, --recursive, --files-from, "
                      "--output-dir, --suffix or --rm): each file's output is written beside it, or under "
                      "--output-dir");
  }
  for (const std::string& input : args.inputs) {
    if (names_stdio(input)) {
      throw usage_error("'-' (standard input) can't be one of a data set's files: a set's files are named "
                        "(--files-from - reads their names from standard input)");
    }
  }
  refuse(command, "--range", "reads a part of one file: give one input, without the data set's options");
  if (engine == EngineKind::mpi) {
    throw usage_error("--engine mpi runs one file across the ranks: give one input, without the data set's options");
  }
  if (!args.mode.empty() && !args.pbkdf2) {
    throw usage_error("a raw mode with a given key would give every file of the set the same key" +
                      std::string(args.iv_hex.empty() ? "" : " and IV (the same --iv reuses CTR's, OFB's and CFB's "
                                                        "keystream across files)") +
                      ": use the sealed format (a key per file), --pbkdf2 (a salt, key and IV per file), or one "
                      "input a run");
  }
  if (args.pbkdf2 && (args.no_salt || command.count("--salt") != 0)) {
    throw usage_error("--nosalt and --salt give every file of a set the same key and IV: drop them, so that each "
                      "file draws its own salt");
  }
  if (command.count("--suffix") != 0 && (args.suffix.empty() || args.suffix.find('/') != std::string::npos)) {
    throw usage_error("--suffix takes a name's ending, without '/', got '" + printable(args.suffix) + "'");
  }
}

// The suffixes of a set's outputs (encrypting: the first is added) or inputs
// (decrypting: any of them is removed).
std::vector<std::string> set_suffixes(Direction direction, const TransformArgs& args, const CLI::App& command) {
  if (command.count("--suffix") != 0) return {args.suffix};
  if (!args.mode.empty()) return {".enc"};
  if (args.format == "tink") return {".tink"};
  if (direction == Direction::decrypt) return {".paes", ".age"};
  return {args.format == "age" ? ".age" : ".paes"};
}

// The paths a --files-from (or, `separator` NUL, --files0-from) file names.
std::vector<std::string> listed_paths(const std::string& list, char separator) {
  std::string text;
  if (list == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), {});
    if (std::cin.bad()) throw Error("reading the list of files from standard input failed");
  } else {
    std::ifstream in(list, std::ios::binary);
    if (!in) throw usage_error("cannot read the list of files " + list);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::vector<std::string> paths;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(separator, start);
    if (end == std::string::npos) end = text.size();
    if (end > start) paths.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return paths;
}

// The line a failed file gets: its message, naming it where the message
// doesn't.
std::string failure_line(const DataSetOutcome& outcome) {
  std::string message = outcome.error->what() + in_flags(outcome.error->remedy());
  try {
    if (outcome.cause) std::rethrow_exception(outcome.cause);
  } catch (const ForeignFormatError& e) {
    message += how_to_read(e.format());  // as the one-file path says it
  } catch (...) {
  }
  const std::string& input = outcome.file->input;
  if (message.find(input) == std::string::npos && message.find(outcome.file->output) == std::string::npos) {
    message = input + ": " + message;
  }
  return "paes: " + printable(message) + "\n";
}

// -v for a set: one line for all of it.
void print_set_summary(Direction direction, const JobDescription& description, const DataSetReport& report) {
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.3f s (%.2f GB/s)", report.seconds,
                report.seconds > 0 ? static_cast<double>(report.bytes_in) / report.seconds / 1e9 : 0.0);
  say("paes: " + std::string(direction == Direction::encrypt ? "encrypted " : "decrypted ") +
      std::to_string(report.done) + (report.done == 1 ? " file, " : " files, ") + format_size(report.bytes_in) +
      " -> " + format_size(report.bytes_out) + " in " + rate + ", " +
      (report.failed != 0 ? std::to_string(report.failed) + " failed, " : "") + description.mode + ", " +
      std::to_string(report.parallel_files) + (report.parallel_files == 1 ? " file" : " files") + " at a time\n");
}

// The file whose header a passphrase prompt is decided by (sealed_spec): the
// first that says what opens it, so that a damaged first file doesn't end
// the set before it began; `runnable`'s when none does.
std::string file_that_tells_its_key(const std::vector<DataSetFile>& files,
                                    std::vector<DataSetFile>::const_iterator runnable) {
  for (auto file = runnable; file != files.end(); ++file) {
    if (!file->error.empty()) continue;
    try {
      sealed_key_kind(file->input);
      return file->input;
    } catch (const Error&) {
      continue;  // its own opening says what is wrong with it
    }
  }
  return runnable->input;
}

// A data set: lists its files, then runs them side by side.
int run_set(Direction direction, TransformArgs& args, const CLI::App& command, TransformOptions options) {
  std::vector<std::string> roots = args.inputs;
  if (!args.files_from.empty()) {
    for (std::string& path : listed_paths(args.files_from, '\n')) roots.push_back(std::move(path));
  }
  if (!args.files0_from.empty()) {
    for (std::string& path : listed_paths(args.files0_from, '\0')) roots.push_back(std::move(path));
  }
  if (!args.recursive) {
    for (const std::string& root : roots) {
      struct stat st {};
      if (::stat(root.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        throw usage_error(root + " is a directory: add --recursive to " + std::string(direction_name(direction)) +
                          " the files in it");
      }
    }
  }
  const DataSetNaming naming{direction, set_suffixes(direction, args, command), args.output_dir, args.recursive};
  const std::vector<DataSetFile> files = list_data_set(roots, naming);
  const auto runnable = std::find_if(files.begin(), files.end(), [](const DataSetFile& f) { return f.error.empty(); });
  std::uint64_t total = 0;
  for (const DataSetFile& file : files) total += file.size;
  Progress progress(total, progress_mode(args), direction == Direction::encrypt ? "encrypting " : "decrypting ");
  progress.count_files(files.size());
  PreparedJob job;
  const JobDescription& description = job.description;
  // No file to run: no key is read, no passphrase asked for.
  if (runnable != files.end()) {
    args.input = file_that_tells_its_key(files, runnable);  // what a passphrase prompt is decided by
    job = prepare_job(direction, args, command, options);
  }
  DataSetOptions set_options;
  set_options.transform = options;
  set_options.transform.progress = [&progress](std::uint64_t bytes) { progress.advance(bytes); };
  set_options.transform.keep_input_times = true;
  set_options.remove_inputs = args.remove_inputs;
  set_options.on_file = [&](const DataSetOutcome& outcome) {
    progress.file_done();
    if (outcome.error) progress.say_above(failure_line(outcome));
    if (!args.json) return;
    nlohmann::json record =
        outcome.report ? json_summary(direction, described_by_the_file(description, *outcome.report), *outcome.report)
                       : nlohmann::json{{"error", outcome.error->what()}};
    record["input"] = outcome.file->input;
    if (!outcome.file->output.empty()) record["output"] = outcome.file->output;
    if (outcome.report && args.remove_inputs) record["input_removed"] = outcome.input_removed;
    // A name need not be UTF-8: replaced, not thrown (a worker's callback must not throw).
    std::cout << record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  };
  const DataSetReport report = job.sealed ? run_sealed_data_set(*job.sealed, files, set_options)
                                         : run_data_set(files, job.run, set_options);
  progress.reach_total();
  progress.finish();
  if (args.verbose) print_set_summary(direction, description, report);
  return report.failed != 0 ? 1 : 0;
}

}  // namespace

// A raw mode decrypts whatever it is given, and a sealed file or an openssl
// -pbkdf2 file given to it comes out as garbage with exit 0: a note says what
// the input looks like, and the option that reads it.
void note_a_container(InputFile& input, const TransformArgs& args) {
  std::array<std::uint8_t, 8> start{};
  if (input.size() < start.size()) return;
  input.read_at(0, start);
  const std::string_view magic(reinterpret_cast<const char*>(start.data()), start.size());
  if (magic.starts_with("PAES")) {
    say("paes: note: " + printable(args.input) + " starts as a paes sealed file does; --mode decrypts it as raw " +
        args.mode + " ciphertext (leave out --mode to open a sealed file)\n");
  } else if (magic == "Salted__") {
    say("paes: note: " + printable(args.input) + " starts with openssl's Salted__ header; without --pbkdf2 it is "
        "decrypted as raw ciphertext, header included (openssl enc -pbkdf2's files take --pbkdf2)\n");
  }
}

int run_transform(Direction direction, const TransformArgs& given, const CLI::App& command) {
  TransformArgs args = given;
  const bool set = names_a_set(args, command);
  if (!set && !args.inputs.empty()) args.input = args.inputs.front();
  if (args.print_key) {
    throw usage_error("-p (openssl enc's, printing the key and IV) is refused: paes never prints a key; with "
                      "--pbkdf2 the salt is in the file's Salted__ header");
  }
  EngineAndBackend resolved = resolve_engine(args, command);
  const EngineKind engine = resolved.engine;
  // Taken as given, the serial engine ran one worker and said nothing of the others.
  if (engine == EngineKind::serial && args.threads > 1) {
    throw usage_error("--threads " + std::to_string(args.threads) +
                      " doesn't go with --engine serial, which runs one worker: drop one of them");
  }
  if (set) {
    check_set_usage(args, command, engine);
  } else {
    check_transform_usage(args, engine);
  }
  std::vector<SecretFile> secrets{{"--key-file", args.keys.key_file}, {"--passphrase-file", args.keys.passphrase_file}};
  for (const std::string& path : args.identities) secrets.push_back({"-i", path});
  for (const std::string& path : args.recipients_files) secrets.push_back({"-R", path});
  std::vector<SecretFile> stdin_readers = secrets;
  stdin_readers.push_back({"--aad-file", args.aad_file});
  stdin_readers.push_back({"--files-from", args.files_from});
  stdin_readers.push_back({"--files0-from", args.files0_from});
  // A set's files are named, never standard input.
  refuse_reading_standard_input_twice(stdin_readers, set ? "./" : args.input, direction_name(direction));
  if (!set) refuse_output_over_secrets(args.output, secrets);
  // A GPU asked for a sealed job (AES-GCM, which runs on the CPU) is a note,
  // not a failure where the machine has no such GPU (PAES_BACKEND=cuda
  // exported on every node of a cluster).
  if (args.mode.empty() && names_gpu_backend(resolved.backend.name) && !args.device) {
    const BackendChoice asked = std::exchange(resolved.backend, BackendChoice{});
    note_run_on_the_cpu(asked, "the sealed format (AES-GCM)", sealed_cpu_backend(resolved.backend, args.input, set));
  } else {
    check_backend(resolved.backend);
  }
  TransformOptions options = transform_options(args, resolved);
  if (set) return run_set(direction, args, command, options);
  // An output that exists (without -f) or has no directory is refused now,
  // not after a passphrase was typed twice and scrypt ran.
  if (!names_stdio(args.output) && !names_output_stream(args.output)) {
    check_output_path(args.output, {.force = args.force});
  }
  // A --range reads a part of the input: its progress has no total to show.
  std::optional<InputFile> input_file;
  if (!names_stdio(args.input) && !names_stream(args.input) && !args.range) input_file.emplace(args.input);
  // (--pbkdf2 reads the Salted__ header itself, and refuses what lacks it.)
  if (input_file && direction == Direction::decrypt && !args.mode.empty() && !args.pbkdf2) {
    note_a_container(*input_file, args);
  }
  Progress progress(input_file ? input_file->size() : 0, progress_mode(args),
                    direction == Direction::encrypt ? "encrypting " : "decrypting ");
  options.progress = [&progress](std::uint64_t bytes) { progress.advance(bytes); };

  JobDescription description;
  TransformReport report;
  try {
    PreparedJob job = prepare_job(direction, args, command, options);
    report = job.run(args.input, args.output, options);
    description = described_by_the_file(job.description, report);
    // Known once the input was read, when decrypting: age's file said so.
    if (report.age && direction == Direction::decrypt && args.format != "age") {
      note_age_runs_on_the_cpu(options.backend);
    }
  } catch (const ForeignFormatError& e) {
    progress.finish();
    throw Error(e.what() + how_to_read(e.format()));
  } catch (...) {
    progress.finish();
    throw;
  }
  // An armored input's count is the text's size counted from the bytes it
  // decoded, a few percent short where its lines end in CRLF: done is done.
  progress.reach_total();
  progress.finish();
  if (input_file) warn_if_input_grew(*input_file, args.input, std::max(input_file->size(), report.bytes_in));
  if (args.verbose) print_summary_line(direction, description, report);
  if (args.json) print_json_summary(direction, description, report);
  return 0;
}

}  // namespace paes::cli
