// The two ends of a job as the command line names them: a file path, or "-"
// (and an omitted path) for stdin and stdout. A file can be read and written
// at any offset, so engines run it in parallel with pread/pwrite; a stream is
// read front to back and written in order through the ordered pipeline.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "paes/io.hpp"

namespace paes {

class ArmoredSource;
class ArmoredSink;

bool names_stdio(const std::string& path);  // "" or "-"
// A path whose bytes can only be read front to back: a named pipe, a process
// substitution's /dev/fd/N (a pipe), a character device, a socket; and a
// regular file of /proc, /sys and their kin, whose size is made up.
bool names_stream(const std::string& path);
// An output path written as a stream, never a file to create or replace: a
// named pipe, or a path that names one of this process's descriptors
// (/dev/stdout; a process substitution's /dev/fd/N, >(...)), which must be
// open for writing.
bool names_output_stream(const std::string& path);
// N, for a path that names this process's descriptor N (/dev/fd/N,
// /proc/self/fd/N, /dev/stdin, /dev/stdout, /dev/stderr).
std::optional<int> descriptor_named(const std::string& path);

class InputEndpoint {
 public:
  // Opens a file, or stdin for "" / "-". A path that is not a regular file or
  // a block device (a named pipe, /dev/fd/N of a process substitution, a
  // character device) is read as a stream, like stdin. Throws Error (missing,
  // unreadable, a directory). `refuse_terminal`: a terminal is refused
  // (ciphertext is never typed). `armor`: Armor::openssl's text is decoded;
  // Armor::paes' is decoded where the input starts with its BEGIN line. A
  // file of paes' (or age's) armor in 64-column lines that all end alike
  // (LF, or CRLF) is decoded at offsets, by the readers of the bytes
  // (source()); other armored files are read front to back, as a stream.
  InputEndpoint(const std::string& path, bool refuse_terminal, Armor armor = Armor::none);
  ~InputEndpoint();
  InputEndpoint(const InputEndpoint&) = delete;
  InputEndpoint& operator=(const InputEndpoint&) = delete;
  // A binary file, read at offsets (file()).
  bool random_access() const { return file_ != nullptr && stream_ == nullptr && armored_ == nullptr; }
  // Its bytes can be read at offsets (source()): a binary file, or the
  // armor of one decoded where it is read.
  bool readable_at_offsets() const { return file_ != nullptr && stream_ == nullptr; }
  const std::string& name() const { return name_; }
  // Whether it is read through an armor decoder: a file found to be armor
  // when opened, a stream once its first bytes were read.
  bool armored() const {
    return armored_ != nullptr || (stream_ != nullptr && (file_ != nullptr || stream_->armored()));
  }
  // The input's length, when it is a binary file read at offsets.
  std::optional<std::uint64_t> size() const;
  // The input file's permission bits (0777), when it is a file.
  std::optional<unsigned> permissions() const;
  // Reads the first bytes (a preamble, a header); fewer only at the end.
  std::size_t read_prefix(std::span<std::uint8_t> dst);

  InputFile& file() { return *file_; }
  // What readable_at_offsets() reads: the file, or the bytes its armor holds.
  Source& source();
  StreamReader& stream() { return *stream_; }
  // The descriptor it reads (the file's, or the stream's).
  int fd() const { return fd_; }

 private:
  std::string name_;
  std::unique_ptr<InputFile> file_;
  std::unique_ptr<ArmoredSource> armored_;  // file_'s armor, decoded at offsets
  std::unique_ptr<StreamReader> stream_;
  int fd_ = -1;
  int owned_fd_ = -1;  // a stream opened by path
  std::uint64_t prefix_read_ = 0;
};

class OutputEndpoint {
 public:
  // A file written through a temporary and committed by rename (OutputFile,
  // with `options`), or a stream: stdout for "" / "-", or a named pipe
  // (also a process substitution's /dev/fd/N), opened as it is and written in
  // order; writing into a pipe replaces nothing, so it takes no -f.
  // A terminal, by any route (stdout, /dev/stdout, /dev/tty), never gets
  // binary: with `refuse_terminal` (ciphertext) it is refused at once;
  // without (a plaintext), only text is written to it (StreamWriter's
  // write_text_only), as age decrypts to a terminal. A stream that is the input
  // file itself (options.input_fd) is refused: it would be overwritten ahead
  // of the reading. With `armor`, what it is given is written as that
  // armor's text, and a terminal is taken: a regular file at offsets, by the
  // writers of the bytes (sink()), each encoding its own; a stream or a
  // device in order.
  OutputEndpoint(const std::string& path, const OutputOptions& options, bool refuse_terminal,
                 Armor armor = Armor::none);
  ~OutputEndpoint();
  OutputEndpoint(const OutputEndpoint&) = delete;
  OutputEndpoint& operator=(const OutputEndpoint&) = delete;
  // A binary file, written at offsets (file()).
  bool random_access() const { return file_ != nullptr && stream_ == nullptr && armored_ == nullptr; }
  // Its bytes can be written at offsets (sink()): a binary file, or one
  // whose armor is encoded where the bytes are written.
  bool writable_at_offsets() const { return file_ != nullptr && stream_ == nullptr; }
  const std::string& name() const { return name_; }
  // Writes the first bytes (a preamble, a header).
  void write_prefix(std::span<const std::uint8_t> src);
  // Ends the armor, if any, and makes a file visible under its name; a
  // stream has nothing else to commit.
  void commit();

  OutputFile& file() { return *file_; }
  // What writable_at_offsets() writes: the file, or its armor.
  Sink& sink();
  StreamWriter& stream() { return *stream_; }

 private:
  std::string name_;
  std::unique_ptr<OutputFile> file_;
  std::unique_ptr<ArmoredSink> armored_;  // file_'s armor, encoded at offsets
  std::unique_ptr<StreamWriter> stream_;
  int owned_fd_ = -1;  // a named pipe opened by path
  std::uint64_t prefix_written_ = 0;
};

}  // namespace paes
