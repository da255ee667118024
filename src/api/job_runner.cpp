#include "api/job_runner.hpp"

#include <sys/stat.h>

#include "api/auto_backend.hpp"
#include "engine/feed.hpp"
#include "paes/error.hpp"
#include "paes/notice.hpp"
#include "util/armor.hpp"
#include "util/elapsed.hpp"

namespace paes {
namespace {

// Runs `job` over `in` from byte `in_skip` to its end, into `out` from byte
// `out_skip` on: in parallel at offsets when both ends are files (or armor
// of files, which the workers decode and encode where they read and write),
// else as a stream. Returns the output bytes the job wrote (the prefix aside).
std::uint64_t run_job(Engine& engine, const Job& job, InputEndpoint& in, std::uint64_t in_skip,
                      OutputEndpoint& out, std::uint64_t out_skip) {
  if (in.readable_at_offsets() && out.writable_at_offsets()) {
    OffsetSource source(in.source(), in_skip);
    OffsetSink sink(out.sink(), out_skip);
    return engine.run(job, source, sink);
  }
  // A file at either end of a stream job is read or written front to back.
  std::unique_ptr<StreamReader> file_reader;
  StreamReader* reader = in.readable_at_offsets() ? nullptr : &in.stream();
  if (!reader) {
    file_reader = std::make_unique<StreamReader>(in.source(), in.name(), in_skip);
    reader = file_reader.get();
  }
  std::unique_ptr<StreamWriter> file_writer;
  StreamWriter* writer = out.writable_at_offsets() ? nullptr : &out.stream();
  if (!writer) {
    file_writer = std::make_unique<StreamWriter>(out.sink(), out.name(), out_skip);
    writer = file_writer.get();
  }
  return engine.run_stream(job, *reader, *writer);
}

}  // namespace

OutputOptions output_options(const TransformOptions& options, Direction direction, const InputEndpoint& in) {
  OutputOptions output;
  output.force = options.force;
  output.input_fd = in.fd();
  // Plaintext is a new file of ours whatever it replaces: a file planted
  // under its name (0666, another user's) must lend it neither.
  output.keep_replaced = direction == Direction::encrypt;
  if (options.output_mode) {
    output.mode = *options.output_mode;
  } else if (direction == Direction::decrypt) {
    output.mode = 0600 & in.permissions().value_or(0600);
  }
  struct stat st {};
  if (options.keep_input_times && in.fd() >= 0 && ::fstat(in.fd(), &st) == 0 && S_ISREG(st.st_mode)) {
    output.times = std::array<timespec, 2>{st.st_atim, st.st_mtim};
  }
  return output;
}

JobRunner::JobRunner(const TransformOptions& options)
    : options_(options),
      engine_(make_engine(options.engine, options.threads)),
      consumed_(std::make_shared<std::atomic<std::uint64_t>>(0)),
      progress_in_text_(std::make_shared<std::atomic<bool>>(false)),
      start_(std::chrono::steady_clock::now()) {
  engine_->on_progress([consumed = consumed_, text = progress_in_text_, forward = options.progress](std::uint64_t bytes) {
    consumed->fetch_add(bytes, std::memory_order_relaxed);
    if (forward) forward(text->load(std::memory_order_relaxed) ? armor_text_len_of(bytes) : bytes);
  });
}

const CipherBackend& raw_backend_for(const CipherSpec& spec, const TransformOptions& options,
                                     std::optional<std::uint64_t> input_len, std::string& why) {
  if (options.backend.auto_may_take_a_gpu()) {
    const AutoChoice choice = choose_auto_backend(spec, input_len, options.threads != 0 ? options.threads : online_cpus(),
                                                  options.backend.device);
    why = choice.why;
    if (choice.backend) return *choice.backend;
  }
  return raw_backend(options.backend.for_job_of(input_len), spec.mode, spec.direction);
}

ChunkPlan raw_plan_for(const CipherSpec& spec, const TransformOptions& options, std::optional<std::uint64_t> input_len,
                       std::string& why) {
  const CipherBackend& backend = raw_backend_for(spec, options, input_len, why);
  // The threads engine fits chunks to the workers the input pays for.
  const unsigned threads = options.threads != 0 ? options.threads : online_cpus();
  const unsigned workers =
      options.engine == EngineKind::threads && input_len ? workers_within_bytes(threads, UINT64_MAX, *input_len) : 0;
  return ChunkPlan(spec,
                   ChunkPlan::decide_chunk_len(spec.mode, options.chunk_len, backend.preferred_chunk_len(), input_len,
                                               workers),
                   backend);
}

namespace {

// A chunk far below a page costs more to hand to a worker than to
// transform: 16-byte chunks of 4.8 MiB took 5.7 s where 1 MiB chunks take
// milliseconds. Said once the plan is made, for an input of so many of them
// that the user will wait (a few tiny chunks are the tests' daily bread).
void warn_if_chunks_are_tiny(const ChunkPlan& plan, std::uint64_t input_len) {
  constexpr std::uint64_t kSmallChunk = 4096;
  constexpr std::uint64_t kManyChunks = 65536;
  const std::uint64_t chunk = plan.chunk_len();
  if (chunk == 0 || chunk >= kSmallChunk || input_len / chunk < kManyChunks) return;
  notify(NoticeLevel::warning, "chunks of " + std::to_string(chunk) + " bytes, " +
                                   std::to_string((input_len + chunk - 1) / chunk) +
                                   " of them: each costs more to hand to a worker than to transform, so this "
                                   "run is slow; chunks of 64 KiB or more run at the cipher's speed");
}

}  // namespace

ChunkPlan JobRunner::plan_for(const CipherSpec& spec, const InputEndpoint& in, std::uint64_t in_skip) {
  std::optional<std::uint64_t> input_len = in.size();
  if (input_len) *input_len -= std::min(*input_len, in_skip);
  ChunkPlan plan = raw_plan_for(spec, options_, input_len, backend_choice_);
  if (input_len) warn_if_chunks_are_tiny(plan, *input_len);
  return plan;
}

void JobRunner::run(const Job& job, InputEndpoint& in, std::uint64_t in_skip, OutputEndpoint& out,
                    std::uint64_t out_skip, TransformReport& report) {
  progress_in_text_->store(in.armored(), std::memory_order_relaxed);
  report.bytes_out = out_skip + run_job(*engine_, job, in, in_skip, out, out_skip);
  out.commit();
  report.bytes_in = in_skip + consumed_->load();
  report.engine = engine_->kind();
  if (!job.parallel() || engine_->kind() == EngineKind::serial) {
    report.workers = 1;
  } else {
    // A stream's length is known now: what it consumed, as a file's size.
    const auto size = in.size();
    report.workers = engine_->workers_for(job, size ? *size - in_skip : consumed_->load());
  }
  report.ranks = engine_->rank_timings();
  // Whether it ran in parallel, not whether its mode could: a small input
  // runs on one worker, and "parallel" beside "threads":1 told nobody anything.
  report.parallel = job.parallel() && (report.workers > 1 || report.ranks.size() > 1);
  // plan_for gave a raw job auto's reason; a sealed job's AES-GCM runs on
  // the CPU's backend (no GPU has it), and auto says so all the same.
  report.engine_choice = backend_choice_.empty() && options_.backend.auto_may_take_a_gpu()
                             ? "auto chose the CPU: the sealed format (AES-GCM) runs on the CPU"
                             : backend_choice_;
  if (!report.ranks.empty()) {  // rank 0's progress only estimates the other ranks' share
    report.bytes_in = in_skip;
    for (const auto& r : report.ranks) report.bytes_in += r.bytes_in;
  }
  report.seconds = seconds_since(start_);
}

}  // namespace paes
