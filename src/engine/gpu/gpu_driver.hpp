// One GPU driver for every device (gpu_device.hpp): the parallel directions of
// the raw modes (ECB both ways, CTR both ways, CBC and CFB128 decryption),
// byte-identical to OpenSSL, over memory and over files.
//
// The contract mirrors ChunkCipher (paes/cipher.hpp), so an engine hands it a
// chunk the way it hands one to OpenSSL: begin() with the chunk's start state
// from the plan, then update() pieces, the last one `final`; run() does a
// whole message from a Source to a Sink.
//
// A piece goes through the device's lanes as a pipeline of three threads, so
// that reading, upload, kernel, download and writing of different batches
// run at the same time:
//   - a reader fills the next free lane's page-locked buffer: straight from
//     the file (preads into pinned memory) or from memory (copies), each
//     batch's split over several threads (copy_threads);
//   - the calling thread launches each filled lane in order (upload, kernel,
//     download on that lane's queue or stream);
//   - a writer waits for each lane in order, checks three of its blocks on
//     the CPU (gpu_check.hpp) and writes its output from the page-locked
//     buffer (pwrites, or copies into memory, split the same way), then
//     frees the lane.
// With `lanes` (>= 3) batches in flight, each stage works on its own batch.
// A piece of one batch runs on the calling thread alone.
//
// Memory the caller pinned (pin()) skips the staging: a piece whose input and
// output lie in it is copied by the device straight from and into it, and
// the reader and writer only hand the batches on. Only a last batch that
// holds a padding block (encryption) or padding to strip (decryption) goes
// through a lane's buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "engine/gpu/gpu_check.hpp"
#include "engine/gpu/gpu_device.hpp"
#include "paes/engine.hpp"
#include "paes/io.hpp"
#include "paes/mode.hpp"

namespace paes {

struct GpuDriverOptions {
  // Bytes per batch (rounded down to whole blocks, and to what one device
  // allocation may hold).
  std::size_t batch_bytes = kGpuBatchBytes;
  // Batches in flight, one per lane; at least 3, so that filling, the device
  // and writing each have one.
  unsigned lanes = 4;
  // Threads that split each batch's move between page-locked buffers and
  // memory or files (copies, preads, pwrites), for filling and for draining
  // each; 0: half the CPUs, 1 to 8 (the engines: half of --threads). At
  // most one per 1 MiB part of a batch: a part is what one thread moves.
  unsigned copy_threads = 0;
  // Time uploads, kernels and downloads with the device's events (stats()).
  bool profile = false;
};

class GpuDriver {
 public:
  // Opens the device's lanes and runs the AES self-test on it
  // (gpu_check.hpp): throws Error when the device fails it.
  GpuDriver(std::unique_ptr<gpu::Device> device, const GpuDriverOptions& options);
  virtual ~GpuDriver();
  GpuDriver(const GpuDriver&) = delete;
  GpuDriver& operator=(const GpuDriver&) = delete;

  // Whether a spec's mode and direction run on a device: ECB, CTR, and the
  // decryption of CBC and CFB128. The others are sequential (or, for CFB8 and
  // CFB1, not worth a device) and belong to the CPU.
  static bool supports(const CipherSpec& spec);

  // Starts a message, or a chunk of one, under `spec` (which need not outlive
  // the call: the round keys are expanded here). start_state is what
  // ChunkPlan::start_state gives: the counter block of the first block (CTR),
  // the ciphertext block before it (CBC, CFB128: the IV for the first chunk);
  // ignored for ECB. Throws a usage Error for an unsupported spec.
  void begin(const CipherSpec& spec, const Block& start_state);

  // Transforms the next `len` bytes of the chunk into `out`, which may equal
  // `in`. Pieces before the final one must be whole blocks. On the final
  // piece a padded (ECB/CBC) spec encrypts with the PKCS#7 block appended
  // (`out` must hold len + 16 bytes) or decrypts, checks and strips it. The
  // work is done when the call returns. Returns the bytes written.
  // Three blocks of every batch are recomputed on the CPU (gpu_check.hpp); a
  // mismatch throws Error, and `out` must then be discarded. Throws Error on
  // bad padding ("bad decrypt: wrong key or corrupted data"), on a length the
  // spec can't take, and on any device failure; the message then ends (a
  // next update() needs a begin()).
  std::size_t update(std::uint8_t* out, const std::uint8_t* in, std::size_t len, bool final);

  // Page-locks the caller's [data, data + len) (CUDA: cudaHostRegister) while
  // the handle lives. Pieces of update() and transform() whose input and
  // output both lie in pinned memory then go straight between it and the
  // device, with no staging copy. Pinning costs time in proportion to `len`:
  // it pays for memory that goes through the device many times. An empty
  // handle where the device can't (OpenCL, memory that overlaps a
  // registration the driver didn't make, or the call failed): the pieces are
  // staged as before. A range inside one pinned here is pinned already, until
  // the outer handle goes. Unpin (drop the handle) before freeing the memory;
  // the driver unpins what is still pinned when it goes.
  PinnedMemory pin(const void* data, std::size_t len);

  // A whole message at once: begin(spec, spec.iv) and one final update.
  // `out` must hold len + 16 bytes.
  std::size_t transform(const CipherSpec& spec, std::uint8_t* out, const std::uint8_t* in, std::size_t len);

  // A whole message from `in` to `out` (files or memory) under `spec`,
  // through the pipeline; `progress` gets the input bytes of each batch
  // written. Returns the output length. Throws as update() does.
  std::uint64_t run(const CipherSpec& spec, Source& in, Sink& out, const std::function<void(std::uint64_t)>& progress);
  // The same for a stream read front to back and written in order (pipes):
  // batches are filled as the input comes, one byte read ahead to learn which
  // is the last. A failure interrupts a read waiting on the input.
  std::uint64_t run_stream(const CipherSpec& spec, StreamReader& in, StreamWriter& out,
                           const std::function<void(std::uint64_t)>& progress);

  // Accumulated since construction or reset_stats(); the device times are
  // filled only with GpuDriverOptions::profile, and add up each batch's
  // device time (batches overlap, so their sum may exceed the wall time).
  struct Stats {
    std::uint64_t bytes = 0;            // bytes through the kernels
    std::uint64_t batches = 0;          // kernel launches
    std::uint64_t checked_batches = 0;  // batches whose sampled blocks matched the CPU
    std::uint64_t direct_batches = 0;   // batches copied straight from and into pinned caller memory
    double kernel_seconds = 0;          // device time in kernels
    double write_seconds = 0;           // device time copying host -> device
    double read_seconds = 0;            // device time copying device -> host
    // Always counted, on the host: each pipeline stage's busy time (wall
    // seconds; the stages overlap one another).
    double fill_seconds = 0;   // filling batches (reading or staging input)
    double wait_seconds = 0;   // waiting for the device to finish a batch
    double drain_seconds = 0;  // checking a batch's samples and writing its output
  };
  const Stats& stats() const { return stats_; }
  void reset_stats() { stats_ = {}; }

  // For benchmarks: the device's page-locked link on `bytes` each way, and
  // the kernel of `spec` alone on `bytes` already on the device (seconds, by
  // the device's events); each the best of `repeats`.
  gpu::LinkRates measure_link(std::size_t bytes, unsigned repeats);
  double kernel_only_seconds(const CipherSpec& spec, std::size_t bytes, unsigned repeats);

  std::size_t batch_bytes() const { return batch_bytes_; }
  unsigned lanes() const { return lanes_; }
  unsigned copy_threads() const { return copy_threads_; }

 protected:
  gpu::Device& gpu_device() const { return *device_; }

 private:
  // Where a piece's bytes come from and go to: fill(dst, offset, n) reads
  // input bytes [offset, offset + n) of the piece; drain(src, offset, n)
  // writes output bytes [offset, offset + n).
  using Fill = std::function<void(std::uint8_t* dst, std::size_t offset, std::size_t n)>;
  using Drain = std::function<void(const std::uint8_t* src, std::size_t offset, std::size_t n)>;
  // A piece's input and output in pinned memory, for its batches to go
  // straight between them and the device (null: staged).
  struct Pinned {
    const std::uint8_t* in = nullptr;
    std::uint8_t* out = nullptr;
  };
  std::size_t run_piece(std::size_t len, bool final, std::span<const std::uint8_t> tail, const Fill& fill,
                        const Drain& drain, const Pinned& pinned, const std::function<void(std::uint64_t)>& progress);
  // What the reader stage put in a lane: the bytes that go through the
  // device, the input bytes among them (for progress), and whether it ends
  // the piece. `from` and `to`: where the device copies the batch from and
  // its result into, when that is pinned caller memory (null: the lane's
  // buffer, where the reader staged it).
  struct Batch {
    std::size_t bytes = 0;
    std::uint64_t input_bytes = 0;
    bool last = false;
    const std::uint8_t* from = nullptr;
    std::uint8_t* to = nullptr;
  };
  // Fills lane buffer `host` with batch `index`.
  using FillBatch = std::function<Batch(std::size_t index, std::uint8_t* host)>;
  // The pipeline over the lanes (see the top of this file), until the batch
  // marked last; with `overlap` false, all on the calling thread. Drain gets
  // each batch's output at its device offset, a padded decryption's last one
  // without its padding. Returns the output bytes. `interrupt` (may be null)
  // is called once a stage failed.
  std::uint64_t run_batches(const FillBatch& fill, const Drain& drain, bool strips_padding, bool overlap,
                            const std::function<void()>& interrupt, const std::function<void(std::uint64_t)>& progress);
  struct Pipeline;

  // Whether [data, data + len) lies in one range pinned by pin().
  bool in_pinned(const void* data, std::size_t len) const;
  void unpin(std::uint64_t id) noexcept;
  struct PinnedRange {
    std::uint64_t id = 0;
    const std::uint8_t* begin = nullptr;
    const std::uint8_t* end = nullptr;
    bool owned = false;  // registered by this range's pin (else it lies inside one that was)
  };

  std::unique_ptr<gpu::Device> device_;
  std::vector<PinnedRange> pinned_;
  std::uint64_t next_pin_id_ = 0;
  // Handles hold it weakly: one dropped after the driver went (whose
  // destructor unpinned its memory) does nothing.
  std::shared_ptr<const bool> alive_ = std::make_shared<const bool>(true);
  std::size_t batch_bytes_ = 0;
  unsigned lanes_ = 0;
  unsigned copy_threads_ = 0;
  Stats stats_;
  gpu::BatchCheck output_check_;

  // The message under way (begin .. final update).
  bool begun_ = false;
  Mode mode_ = Mode::ctr;
  Direction direction_ = Direction::encrypt;
  bool padded_ = false;
  gpu::Kernel kernel_ = gpu::Kernel::ctr;
  Block counter0_{};              // CTR: counter block of the chunk's first block
  Block chain_{};                 // CBC/CFB: ciphertext block before the next piece
  std::uint64_t blocks_done_ = 0;  // CTR: blocks of the chunk already transformed
};

// The usage error for --device INDEX where the API (CUDA, OpenCL) lists
// `count` devices, numbered from 0.
Error no_such_device(const char* api, unsigned index, std::size_t count);

}  // namespace paes
