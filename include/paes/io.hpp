// Where bytes come from and go. Engines see a message as random-access input
// and output; files implement that with pread/pwrite, memory with views so an
// in-memory job (paes bench, the library API) never copies.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "paes/armor.hpp"

namespace paes {

class ArmorEncoder;
class ArmorDecoder;

// Where a file-backed source or sink lives, for engines that open the file
// themselves (MPI ranks with MPI-IO).
struct FileLocation {
  std::string path;
  std::uint64_t offset = 0;  // of the job's first byte in the file
  // The descriptor its owner reads or writes through, or -1: the name may
  // have been given to another file since it was opened.
  int fd = -1;
};

// Sources and sinks are read and written at offsets from several threads at
// once (the engines' workers, the GPU driver's split batches): read_at and
// write_at must be safe to call concurrently on disjoint ranges.
class Source {
 public:
  virtual ~Source() = default;
  virtual std::uint64_t size() const = 0;
  // Fills `dst` from `offset`; throws Error on a read error or a short read
  // (the input shrank under us).
  virtual void read_at(std::uint64_t offset, std::span<std::uint8_t> dst) = 0;
  // Zero-copy access when the bytes are already in memory, else nullptr.
  virtual const std::uint8_t* view(std::uint64_t, std::size_t) { return nullptr; }
  // True when there is no I/O to overlap with the cipher.
  virtual bool in_memory() const { return false; }
  virtual std::optional<FileLocation> location() const { return std::nullopt; }
};

class Sink {
 public:
  virtual ~Sink() = default;
  // Writes all of `src` at `offset`; throws Error on failure (disk full, ...).
  virtual void write_at(std::uint64_t offset, std::span<const std::uint8_t> src) = 0;
  // Where to transform straight into when the output is memory, else nullptr;
  // bytes placed there need no write_at.
  virtual std::uint8_t* view(std::uint64_t, std::size_t) { return nullptr; }
  virtual bool in_memory() const { return false; }
  virtual std::optional<FileLocation> location() const { return std::nullopt; }
};

class MemorySource final : public Source {
 public:
  explicit MemorySource(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  std::uint64_t size() const override { return bytes_.size(); }
  void read_at(std::uint64_t offset, std::span<std::uint8_t> dst) override;
  const std::uint8_t* view(std::uint64_t offset, std::size_t len) override;
  bool in_memory() const override { return true; }

 private:
  std::span<const std::uint8_t> bytes_;
};

class MemorySink final : public Sink {
 public:
  explicit MemorySink(std::span<std::uint8_t> bytes) : bytes_(bytes) {}
  void write_at(std::uint64_t offset, std::span<const std::uint8_t> src) override;
  std::uint8_t* view(std::uint64_t offset, std::size_t len) override;
  bool in_memory() const override { return true; }

 private:
  std::span<std::uint8_t> bytes_;
};

// What OffsetSource and OffsetSink share: another source or sink seen from
// `offset` on, whose file location (for engines that open the file
// themselves) is moved by the same amount.
template <class Io>
class Offset : public Io {
 public:
  bool in_memory() const override { return inner_.in_memory(); }
  std::optional<FileLocation> location() const override {
    auto where = inner_.location();
    if (where) where->offset += offset_;
    return where;
  }

 protected:
  Offset(Io& inner, std::uint64_t offset) : inner_(inner), offset_(offset) {}

  Io& inner_;
  std::uint64_t offset_;
};

// The part of another source from `offset` on: the body after a header.
class OffsetSource final : public Offset<Source> {
 public:
  OffsetSource(Source& inner, std::uint64_t offset);
  std::uint64_t size() const override { return inner_.size() - offset_; }
  void read_at(std::uint64_t offset, std::span<std::uint8_t> dst) override {
    inner_.read_at(offset_ + offset, dst);
  }
  const std::uint8_t* view(std::uint64_t offset, std::size_t len) override {
    return inner_.view(offset_ + offset, len);
  }
};

// Another sink shifted by `offset`: the body written after a header.
class OffsetSink final : public Offset<Sink> {
 public:
  OffsetSink(Sink& inner, std::uint64_t offset) : Offset(inner, offset) {}
  void write_at(std::uint64_t offset, std::span<const std::uint8_t> src) override {
    inner_.write_at(offset_ + offset, src);
  }
  std::uint8_t* view(std::uint64_t offset, std::size_t len) override {
    return inner_.view(offset_ + offset, len);
  }
};

// A sequential input (a pipe, a terminal, or a file read front to back).
// Does not own the descriptor.
class StreamReader {
 public:
  // A pipe or a terminal, read to its end. A pipe is grown to hold a whole
  // chunk where the kernel allows.
  StreamReader(int fd, std::string name);
  // A file read from its current position: exactly `len` bytes, what it held
  // when the job started (as a file job reads). If the file ends sooner (it
  // shrank) read_full throws; bytes appended meanwhile are not read.
  StreamReader(int fd, std::string name, std::uint64_t len);
  // Either input, read through `armor`: Armor::openssl's text is decoded;
  // Armor::paes' is decoded where the input starts with its BEGIN line, and
  // other input is read as it is.
  StreamReader(int fd, std::string name, Armor armor);
  StreamReader(int fd, std::string name, std::uint64_t len, Armor armor);
  // `source` read front to back from `offset` to its end: a file read at
  // offsets (or the bytes its armor holds) for a job whose other end is a
  // stream. Does not own it.
  StreamReader(Source& source, std::string name, std::uint64_t offset);
  ~StreamReader();
  StreamReader(const StreamReader&) = delete;
  StreamReader& operator=(const StreamReader&) = delete;

  // Reads `len` bytes, fewer only at the end of the input. Throws Error, also
  // once interrupt() was called.
  std::size_t read_full(std::uint8_t* dst, std::size_t len);
  // Makes a read_full of a pipe or a terminal that waits on a producer who
  // writes nothing (a stalled pipe) throw at once, and every later one: a job
  // that already failed must not wait for input it will never use. (A file
  // never keeps a read waiting.) Safe from any thread.
  void interrupt();
  const std::string& name() const { return name_; }
  // Whether the bytes read so far were decoded from armor.
  bool armored() const { return decoder_ != nullptr; }

 private:
  std::size_t read_raw(std::uint8_t* dst, std::size_t len);
  std::size_t read_decoded(std::uint8_t* dst, std::size_t len);
  void look_for_armor();

  int fd_ = -1;
  std::string name_;
  std::optional<std::uint64_t> file_left_;  // set for a file
  Source* source_ = nullptr;                // read instead of fd_ where set
  std::uint64_t source_at_ = 0;             // the next offset read from it
  int wake_fd_ = -1;                        // an eventfd that interrupt() signals
  Armor armor_ = Armor::none;
  bool looked_ = false;                     // Armor::paes: whether the input's start was read
  std::unique_ptr<ArmorDecoder> decoder_;   // set once the input is known to be armor
  std::vector<std::uint8_t> pending_;       // read, not yet returned (decoded, or the unarmored start)
  std::size_t pending_at_ = 0;
  std::vector<std::uint8_t> text_;          // armor read, to decode
  bool text_ended_ = false;
};

// A sequential output (a pipe or a terminal-free stdout). Does not own the
// descriptor.
class StreamWriter {
 public:
  // A pipe is grown to hold a whole chunk where the kernel allows.
  StreamWriter(int fd, std::string name);
  // Writes what it is given as `armor`'s text (Armor::none: as it is).
  StreamWriter(int fd, std::string name, Armor armor);
  // Writes `sink` front to back from `offset` on: a file written at offsets
  // (or its armor) for a job whose input is a stream. Does not own it.
  StreamWriter(Sink& sink, std::string name, std::uint64_t offset);
  ~StreamWriter();
  // Writes all of `src`. Throws Error (a closed pipe, a full disk).
  void write_all(std::span<const std::uint8_t> src);
  // Ends the armor: its last line and END line. Once, after the last
  // write_all of a complete output; without armor it writes nothing.
  void finish();
  const std::string& name() const { return name_; }
  // For a terminal: only text is written (no control character but tab,
  // CR and LF, nor a C1 control in UTF-8), so that a binary plaintext or
  // one holding escape sequences never drives the terminal. The first
  // kTextHold bytes are held and checked before any is shown (a tar, a
  // gzip file shows itself there: nothing reaches the screen); past them,
  // each write is checked before it goes. Binary is a usage Error.
  void write_text_only();
  static constexpr std::size_t kTextHold = 64 * 1024;

 private:
  void write_raw(std::span<const std::uint8_t> src);
  void check_text(std::span<const std::uint8_t> src);

  int fd_ = -1;
  std::string name_;
  Sink* sink_ = nullptr;       // written instead of fd_ where set
  std::uint64_t sink_at_ = 0;  // the next offset written to it
  std::unique_ptr<ArmorEncoder> encoder_;
  std::vector<std::uint8_t> text_;  // the armor of what write_all was given
  bool text_only_ = false;
  bool holding_ = false;                 // text_only_, and still within the first kTextHold bytes
  std::vector<std::uint8_t> held_;
  std::uint8_t last_byte_ = 0;           // a C1 control is two bytes, which two writes may split
};

// A regular file opened for reading. Throws Error naming the path when it is
// missing, unreadable or a directory.
class InputFile final : public Source {
 public:
  explicit InputFile(const std::string& path);
  ~InputFile() override;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  std::uint64_t size() const override { return size_; }
  void read_at(std::uint64_t offset, std::span<std::uint8_t> dst) override;
  const std::string& path() const { return path_; }
  int fd() const { return fd_; }
  // Its permission bits (0777) when opened.
  unsigned permissions() const { return permissions_; }
  std::optional<FileLocation> location() const override { return FileLocation{path_, 0, fd_}; }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  unsigned permissions_ = 0;
};

// How an OutputFile treats an existing name, and the permissions it gives.
struct OutputOptions {
  // Replace an existing file, or a symbolic link (the link itself, never what
  // it points to); write a device other than /dev/null in place.
  bool force = false;
  // Permissions of a new file, less the umask: 0666 for what is not secret
  // (ciphertext), 0600 for what is (plaintext, keys).
  unsigned mode = 0666;
  // With force, the file that is replaced lends its permissions (not set-id
  // bits), owner and group to the new one, as cp keeps them by writing in
  // place; where the owner can't be kept (not root), the new file is ours, and
  // where the group can't be kept either, its group bits are cleared. False:
  // a replacement is a new file of ours with `mode` (plaintext and key files:
  // a file another user planted under the name must not get them).
  bool keep_replaced = true;
  // The descriptor of the job's input, or -1. An output written in place (a
  // device, stdout, a pipe) must not be the input's file or block device:
  // the job would overwrite what it has not read yet. (A file is replaced
  // by rename, so naming the input as the output with force is safe.)
  int input_fd = -1;
  // The access and modification times to give the output before it takes
  // its name (a data set's outputs carry their inputs' times, as gzip's do);
  // none: the time it was written.
  std::optional<std::array<timespec, 2>> times{};
};

// Throws Error when `fd` (an output written in place) is the same regular
// file or block device as `input_fd` (-1: nothing to compare); `name` names
// the output.
void refuse_writing_the_input(int fd, int input_fd, const std::string& name);

// What OutputFile would refuse at once for `path`, checked without creating
// anything: an existing name without force, a directory, a directory to
// create it in that doesn't exist. For a caller about to spend time (a
// passphrase prompt, a key derivation) before it opens the output.
void check_output_path(const std::string& path, const OutputOptions& options);

// An existing regular file written in place at offsets, by one of several
// processes that share it: an MPI rank's view of the temporary output rank 0
// created (OutputFile), on a file system every rank mounts. Writes start their
// writeback at once, as OutputFile's do; close() makes them durable (fdatasync)
// and reports what the file system reports only then (NFS: ENOSPC, EDQUOT,
// EIO at close). It never creates, renames or removes the file. /dev/null,
// named so, is taken too: every rank discards its part.
class SharedOutputFile final : public Sink {
 public:
  explicit SharedOutputFile(const std::string& path);
  ~SharedOutputFile() override;
  SharedOutputFile(const SharedOutputFile&) = delete;
  SharedOutputFile& operator=(const SharedOutputFile&) = delete;
  void write_at(std::uint64_t offset, std::span<const std::uint8_t> src) override;
  // fdatasync, then close; throws Error naming the path on failure.
  void close();

 private:
  std::string path_;
  int fd_ = -1;
};

// Copies `len` bytes of `in` from `in_offset` into `out_fd` at `out_offset`
// inside the kernel (copy_file_range: no copy through user memory, and
// shared extents where the file system can), with pread and pwrite where it
// can't (across file systems, on older kernels). Throws Error, also when the
// input ends before `len` bytes (it shrank).
void copy_file_bytes(InputFile& in, std::uint64_t in_offset, int out_fd, std::uint64_t out_offset, std::uint64_t len);

// Removes the temporaries of the OutputFiles being written, if there are any,
// and says whether there were. Async-signal-safe: for a program's handler of the
// signals that end it (the library installs none; the paes tool handles
// SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE and others so, then dies of the
// signal), or its atexit() hook.
bool remove_pending_output() noexcept;

// Whether `name` (a file name, no directory) is the temporary an OutputFile
// writes before it takes its name: ".NAME.paes-XXXXXX".
bool is_output_temporary_name(const std::string& name);

// Ends the age plugins paes is running (their process groups are sent
// SIGTERM), and says whether there were any. Async-signal-safe, for the
// same handlers as remove_pending_output(): a plugin runs in a process group
// of its own, which a terminal's Ctrl-C doesn't reach.
bool end_helper_processes() noexcept;

// The output of a job, never visible under its final name until complete.
//
// A regular file is written to a temporary file beside the target (same
// directory, so the final rename is atomic) and renamed by commit(). The
// temporary is 0600 until commit gives it its final permissions, just before
// the rename. Until then the temporary is removed by the destructor, and by
// remove_pending_output() from a signal handler (every OutputFile being
// written, up to 64 at once). Without `force`, an existing target (a symbolic link
// included, dangling or not) is refused up front and again, race-free, at the
// rename. With `force` the target may even be the input: it is replaced only
// once the new content is complete.
// A device is written in place: /dev/null always, any other only with
// `force`. Terminals are refused: ciphertext is binary.
class OutputFile final : public Sink {
 public:
  OutputFile(const std::string& path, const OutputOptions& options);
  ~OutputFile() override;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write_at(std::uint64_t offset, std::span<const std::uint8_t> src) override;
  // The temporary being written (the path itself for a device).
  std::optional<FileLocation> location() const override {
    return FileLocation{temp_path_.empty() ? path_ : temp_path_, 0, fd_};
  }
  // Makes the output visible under its final name, durably: the data is
  // fsynced before the rename, the directory after it. Throws Error on failure,
  // in which case nothing is left under either name, except when only the
  // directory sync failed: the complete output is then in place, and the error
  // says that a crash may undo the rename.
  void commit();
  int fd() const { return fd_; }

 private:
  void discard() noexcept;
  std::string path_;
  std::string dir_;        // holding the target, ending in '/' (or ".")
  std::string temp_path_;  // empty when writing in place to a device
  int fd_ = -1;
  OutputOptions options_;
  bool committed_ = false;
  int cleanup_slot_ = -1;  // where remove_pending_output() finds the temporary
};

}  // namespace paes
