// The mpi engine: ranks x threads, the thesis' two-level decomposition, without
// its root bottleneck.
//
// This file is the ranks' work on a job: the hand-off of rank 0's job (the
// assignment and its encoding), each rank's range, the failure and commit
// protocol between the ranks, and MpiEngine. The MPI process's life-cycle
// (MPI_Init, and MPI_Finalize with its deadline; the launcher check; serve(),
// where the other ranks wait; the exit status; the temporary output's watch)
// is MpiSession's, in mpi_session.cpp. What both use (the message kinds, the
// collectives that wait without spinning) is in mpi_collectives.hpp.
//
// Rank 0 alone runs the command line: it reads the key or asks for the
// passphrase, reads or writes the sealed preamble and header, and creates the
// temporary output beside the target (io/OutputFile). When the front door
// hands the job to this engine, rank 0 broadcasts a ticket: the job as bytes
// (Job::ticket(): mode or segment parameters and the key material, never the
// data), the input path and the temporary output path with the offsets where
// the job's bytes start. The other ranks wait in MpiSession::serve() for that
// ticket and rebuild the job from it.
//
// Then every rank, rank 0 included, does the same thing:
//   - opens the input and the temporary output itself, with open(2);
//   - checks that the file it opened is the one rank 0 read (the same size,
//     inode and modification time, by fstat of the descriptors, not by path:
//     a name given another file between two opens still names a file; on a
//     shared file system every host agrees), since a rank that sized another
//     file would skip or invent chunks (a sealed body could lose its only
//     last-flagged segment and still commit), and one that read another file
//     than the header rank 0 read would decrypt it under that header's key;
//   - computes the chunk count from rank 0's input size, and takes a contiguous,
//     balanced range of chunks (count / ranks, one more for the first
//     count % ranks ranks), its first index found with MPI_Exscan;
//   - runs its range as the threads engine runs a file (run_chunks_in_parallel):
//     each of its threads preads a chunk (with the 16 bytes before it for
//     CBC/CFB decryption), transforms it and pwrites it at its own offset,
//     so reading, the cipher and writing overlap, and each write starts its
//     writeback at once (SharedOutputFile). No rank reads more than its range,
//     no data passes through rank 0, and only the main thread calls MPI.
// POSIX I/O rather than MPI-IO, by measurement: with MPI-IO (ROMIO) each rank
// read a batch, transformed it, then wrote it, on its main thread (ROMIO
// serializes calls across threads, and its nonblocking calls block without
// AIO), so nothing overlapped: 1 GiB CTR on tmpfs, 2-core VM, 1 rank x 2
// threads took 1.59x the threads engine's time, 2 ranks x 1 thread 1.13x.
// MPI-IO's collective buffering only pays for small, interleaved accesses;
// a rank's are large and contiguous.
// GPUs: each rank drives its own device of rank 0's GPU backend: the one
// rank 0 was given (every rank the same), or else its rank among its node's
// ranks modulo the node's device count, so that a node's ranks spread over
// its GPUs. The job's ticket carries its backend's name and the given
// device, and each rank, rank 0 included, rebuilds the job on its own
// device (rank_job) and opens it itself.
// A sequential job (CBC/CFB encryption, OFB) has one chain of state through
// the whole message, so rank 0 runs all of it, in order, and says so; the
// other ranks open and close the files and wait.
//
// Failure: every rank records its first error. After each phase (opening the
// files, processing the range) the ranks combine their outcomes with an
// allreduce (the lowest failing rank wins) and that rank broadcasts its
// message, so every rank throws the same Error. Rank 0's front door then
// never commits: OutputFile removes the temporary, and rank 0 alone prints the
// message. A rank that can't decode the job (another paes build) fails the
// first such phase rather than leaving the others waiting in a collective.
//
// Commit: each rank makes its writes durable (fdatasync on its own host) and
// checks its close before the ranks agree; rank 0 renames the temporary only
// after all ranks succeeded, then broadcasts its exit status (the commit's
// outcome included), which every rank exits with (MpiSession::finish and
// MpiSession::serve, in mpi_session.cpp).
#include <mpi.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "engine/engines.hpp"
#include "engine/feed.hpp"
#include "engine/mpi/mpi_collectives.hpp"
#include "engine/mpi/mpi_engine.hpp"
#include "job/ticket.hpp"
#include "paes/backend.hpp"
#include "paes/error.hpp"
#include "paes/mpi.hpp"
#include "paes/notice.hpp"
#include "util/elapsed.hpp"

namespace paes {
namespace {

using Clock = std::chrono::steady_clock;

// Which file a descriptor reads, as far as every host of a shared file system
// agrees (device numbers differ between NFS clients; inode numbers and times
// don't).
struct FileIdentity {
  std::uint64_t size = 0;
  std::uint64_t inode = 0;
  std::uint64_t mtime_ns = 0;

  static FileIdentity of(int fd, const std::string& path) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw system_error("opening the input " + path);
    return {static_cast<std::uint64_t>(st.st_size), static_cast<std::uint64_t>(st.st_ino),
            static_cast<std::uint64_t>(st.st_mtim.tv_sec) * 1000000000u + static_cast<std::uint64_t>(st.st_mtim.tv_nsec)};
  }
  bool operator==(const FileIdentity&) const = default;
};

// Everything the other ranks need, as broadcast by rank 0.
struct Assignment {
  SecretBytes ticket;
  FileLocation input;
  FileLocation output;
  std::uint64_t input_len = 0;  // the job's bytes, from input.offset on, as rank 0 sized them
  FileIdentity input_identity;  // the input file as rank 0 saw it
  unsigned threads = 0;         // per rank; 0: the node's CPUs over its ranks
};

// The assignment travels in the job ticket's encoding (job/ticket.hpp): key
// material never lands in a buffer that is freed unwiped, and a malformed
// payload is an error, not a read past its end.
SecretBytes encode(const Assignment& a) {
  TicketWriter w;
  w.u64(a.ticket.size());
  w.raw(a.ticket.data(), a.ticket.size());
  for (const FileLocation* where : {&a.input, &a.output}) {
    w.u64(where->path.size());
    w.raw(reinterpret_cast<const std::uint8_t*>(where->path.data()), where->path.size());
    w.u64(where->offset);
  }
  w.u64(a.input_len);
  w.u64(a.input_identity.size);
  w.u64(a.input_identity.inode);
  w.u64(a.input_identity.mtime_ns);
  w.u64(a.threads);
  return w.finish();
}

Assignment decode(const SecretBytes& bytes) {
  TicketReader r(bytes);
  Assignment a;
  const auto ticket_len = static_cast<std::size_t>(r.u64());
  a.ticket = SecretBytes(r.take(ticket_len), ticket_len);
  for (FileLocation* where : {&a.input, &a.output}) {
    const auto len = static_cast<std::size_t>(r.u64());
    where->path.assign(reinterpret_cast<const char*>(r.take(len)), len);
    where->offset = r.u64();
  }
  a.input_len = r.u64();
  a.input_identity.size = r.u64();
  a.input_identity.inode = r.u64();
  a.input_identity.mtime_ns = r.u64();
  a.threads = static_cast<unsigned>(r.u64());
  return a;
}

// Combines every rank's outcome of a phase. Returns when all succeeded;
// otherwise every rank throws the lowest failing rank's error.
void settle(const std::exception_ptr& local_error) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::string message;
  int usage = 0;
  if (local_error) {
    try {
      std::rethrow_exception(local_error);
    } catch (const Error& e) {
      message = e.what();
      usage = e.kind() == ErrorKind::usage ? 1 : 0;
    } catch (const std::exception& e) {
      message = e.what();
    }
  }
  const int mine = local_error ? rank : size;
  int first = size;
  allreduce(&mine, &first, 1, MPI_INT, MPI_MIN);
  if (first == size) return;
  std::uint64_t head[2] = {message.size(), static_cast<std::uint64_t>(usage)};
  bcast(head, 2, MPI_UINT64_T, first);
  message.resize(head[0]);
  bcast(message.data(), static_cast<int>(head[0]), MPI_CHAR, first);
  const std::string where = size > 1 ? " (rank " + std::to_string(first) + ")" : "";
  throw Error(message + where, head[1] != 0 ? ErrorKind::usage : ErrorKind::failure);
}

unsigned default_threads_per_rank() {
  return std::max(1u, online_cpus() / static_cast<unsigned>(std::max(1, MpiSession::current()->node_size())));
}

// The job of the assignment as this rank runs it: on the ticket's backend,
// a GPU's on this rank's device (see the comment at the top of the file).
// Every backend gives the same bytes, so a rank whose host can't run the
// ticket's (no ipsec-mb there, no AES-NI, no device of that GPU API) runs
// auto's instead; a device index its host lacks fails the job when the
// device opens.
std::unique_ptr<Job> rank_job(const Assignment& a) {
  BackendChoice backend = ticket_backend(a.ticket);
  const unsigned devices = cipher_device_count(backend.name);
  if (devices == 0) {
    backend.device.reset();
  } else if (!backend.device) {
    backend.device = static_cast<unsigned>(MpiSession::current()->node_rank()) % devices;
  }
  try {
    check_backend_choice(backend);
  } catch (const Error&) {
    backend = BackendChoice{};
  }
  return job_from_ticket(a.ticket, backend);
}

struct RankResult {
  std::uint64_t bytes_out = 0;
  Engine::RankTiming timing;
};

// This rank's part of the job (see the comment at the top of the file): a
// contiguous, balanced range of chunks, run as the threads engine runs a file.
RankResult run_my_range(const Job& job, Source& in, Sink& out, unsigned threads, const ProgressCallback& progress) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  RankResult result;
  const std::uint64_t count = job.chunk_count(in.size());
  const auto ranks = static_cast<std::uint64_t>(size);
  std::uint64_t mine = 0;
  if (job.parallel()) {
    mine = count / ranks + (static_cast<std::uint64_t>(rank) < count % ranks ? 1 : 0);
  } else {
    mine = rank == 0 ? count : 0;  // one chain of state: rank 0, in order, one thread
    threads = 1;
  }
  std::uint64_t first = 0;
  collective([&](MPI_Request* r) { MPI_Iexscan(&mine, &first, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD, r); });
  if (rank == 0) first = 0;  // an exscan leaves rank 0's result undefined
  result.timing.threads = static_cast<unsigned>(std::clamp<std::uint64_t>(mine, 1, threads));
  if (mine == 0) return result;

  std::atomic<std::uint64_t> bytes_in{0};
  const std::uint64_t share = job.parallel() ? ranks : 1;  // rank 0's progress stands for every rank
  const ProgressCallback count_in = [&](std::uint64_t bytes) {
    bytes_in += bytes;
    if (progress) progress(bytes * share);
  };
  const auto start = Clock::now();
  result.bytes_out = run_chunks_in_parallel(job, in, out, {first, mine}, threads, count_in);
  result.timing.compute_seconds = seconds_since(start);
  result.timing.bytes_in = bytes_in.load();
  return result;
}

// Every rank works on the bytes rank 0 sized, of the file rank 0 read: a rank
// that opened another file (not shared between hosts, or replaced) or another
// size (it grew or shrank) would compute another chunk count.
void check_same_input(const Assignment& a, const InputFile& in) {
  const std::uint64_t opened_len = in.size();
  const FileIdentity seen = FileIdentity::of(in.fd(), a.input.path);
  const std::uint64_t expected = a.input.offset + a.input_len;
  if (opened_len != expected || seen.size != expected) {
    throw Error("the input " + a.input.path + " has " + std::to_string(opened_len) + " bytes here, rank 0 read " +
                std::to_string(expected) + ": every rank must see the same file, unchanged during the run");
  }
  if (!(seen == a.input_identity)) {
    throw Error("the input " + a.input.path + " here is not the file rank 0 read (another inode or "
                "modification time): every rank must see the same file, unchanged during the run");
  }
}

// Every rank: open, run this rank's range, close, combine. Returns the total
// output bytes and, on rank 0, every rank's timing.
std::uint64_t run_everywhere(const Job& job, const Assignment& a, const ProgressCallback& progress,
                             std::vector<Engine::RankTiming>& timings) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const unsigned threads = a.threads != 0 ? a.threads : default_threads_per_rank();

  std::exception_ptr error;
  std::unique_ptr<InputFile> in;
  std::unique_ptr<SharedOutputFile> out;
  auto start = Clock::now();
  try {
    in = std::make_unique<InputFile>(a.input.path);
    out = std::make_unique<SharedOutputFile>(a.output.path);
    check_same_input(a, *in);
  } catch (...) {
    error = std::current_exception();
  }
  settle(error);
  double io_seconds = seconds_since(start);

  RankResult mine;
  try {
    if (rank == 0 && !job.parallel() && size > 1) {
      notify(NoticeLevel::note, "this mode and direction is sequential by nature; under MPI it runs on rank 0 alone");
    }
    OffsetSource source(*in, a.input.offset);
    OffsetSink sink(*out, a.output.offset);
    mine = run_my_range(job, source, sink, threads, progress);
  } catch (...) {
    error = std::current_exception();
  }
  // Every rank makes its own writes durable and checks its close, whether it
  // failed or not, before the ranks agree: rank 0 commits only when every
  // rank's bytes are on disk.
  start = Clock::now();
  try {
    out->close();
  } catch (...) {
    if (!error) error = std::current_exception();
  }
  in.reset();
  mine.timing.io_seconds = io_seconds + seconds_since(start);
  settle(error);

  std::uint64_t total = 0;
  allreduce(&mine.bytes_out, &total, 1, MPI_UINT64_T, MPI_SUM);
  // Each rank's numbers, and the device it ran (its index plus one; 0: none).
  const BackendChoice ran = job.backend();
  const std::string& backend = ran.name;
  double row[5] = {mine.timing.compute_seconds, mine.timing.io_seconds, static_cast<double>(mine.timing.bytes_in),
                   static_cast<double>(mine.timing.threads), ran.device ? *ran.device + 1.0 : 0.0};
  std::vector<double> all(rank == 0 ? 5 * static_cast<std::size_t>(size) : 0);
  collective([&](MPI_Request* r) { MPI_Igather(row, 5, MPI_DOUBLE, all.data(), 5, MPI_DOUBLE, 0, MPI_COMM_WORLD, r); });
  // And the backend each ran, by name: a rank whose host lacked rank 0's ran another.
  const int backend_len = static_cast<int>(backend.size());
  std::vector<int> lens(rank == 0 ? static_cast<std::size_t>(size) : 0);
  collective(
      [&](MPI_Request* r) { MPI_Igather(&backend_len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD, r); });
  std::vector<int> starts(lens.size());
  for (std::size_t r = 1; r < lens.size(); ++r) starts[r] = starts[r - 1] + lens[r - 1];
  std::string names(lens.empty() ? 0 : static_cast<std::size_t>(starts.back() + lens.back()), '\0');
  collective([&](MPI_Request* r) {
    MPI_Igatherv(backend.data(), backend_len, MPI_CHAR, names.data(), lens.data(), starts.data(), MPI_CHAR, 0,
                 MPI_COMM_WORLD, r);
  });
  timings.clear();
  for (std::size_t r = 0; rank == 0 && r < static_cast<std::size_t>(size); ++r) {
    const double* t = &all[5 * r];
    timings.push_back({t[0], t[1], static_cast<std::uint64_t>(t[2]), static_cast<unsigned>(t[3]),
                       names.substr(static_cast<std::size_t>(starts[r]), static_cast<std::size_t>(lens[r])),
                       t[4] != 0 ? std::optional<unsigned>(static_cast<unsigned>(t[4]) - 1) : std::nullopt});
  }
  return total;
}

}  // namespace

void serve_job(const SecretBytes& payload) {
  std::exception_ptr error;
  Assignment a;
  std::unique_ptr<Job> job;
  try {
    a = decode(payload);
    job = rank_job(a);
  } catch (...) {
    error = std::current_exception();
  }
  settle(error);  // rank 0 settles its side in MpiEngine::run
  std::vector<Engine::RankTiming> unused;
  run_everywhere(*job, a, nullptr, unused);
}

MpiEngine::MpiEngine(unsigned threads) : threads_(threads) {
  if (!MpiSession::current()) throw usage_error("the mpi engine needs MPI initialised (run under mpiexec)");
}

unsigned MpiEngine::workers_for(const Job& job, std::uint64_t) const {
  if (!job.parallel()) return 1;
  unsigned total = 0;
  for (const auto& t : timings_) total += t.threads;
  return total;
}

std::uint64_t MpiEngine::run(const Job& job, Source& in, Sink& out) {
  const auto input = in.location();
  const auto output = out.location();
  if (!input || !output) {
    throw usage_error("the mpi engine needs files on both ends: every rank opens them with MPI-IO");
  }
  MpiSession& session = *MpiSession::current();
  // The file behind the descriptor this rank read (a sealed header, a salt),
  // not the one its name gives now.
  Assignment a{job.ticket(), *input, *output, in.size(), FileIdentity::of(input->fd, input->path), threads_};
  // Rank 0 runs the job as every rank does: rebuilt on its own device.
  const std::unique_ptr<Job> mine = rank_job(a);
  const SecretBytes payload = encode(a);
  session.watch_temporary(output->path);
  session.job_sent();
  broadcast_message(MpiMessage::job, &payload, 0);
  settle(nullptr);  // the other ranks' decoding of the job (MpiSession::serve)
  return run_everywhere(*mine, a, [this](std::uint64_t bytes) { report(bytes); }, timings_);
}

std::uint64_t MpiEngine::run_stream(const Job&, StreamReader&, StreamWriter&) {
  check_streams(kind());  // throws: the rule is the engine table's (engine.cpp)
  throw Error("internal: the mpi engine was given a stream");
}

}  // namespace paes
