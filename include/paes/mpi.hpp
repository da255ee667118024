// MPI support: one session per process, and the hand-off by which rank 0 (the
// rank that parses the command line, reads keys, asks for passphrases and
// owns the output) gives the other ranks their part of a job. In libpaes_mpi
// (CMake: paes::paes_mpi, which defines PAES_HAVE_MPI), built where MPI was
// found; libpaes itself never loads MPI. Starting a session is what makes
// make_engine(EngineKind::mpi) work in this process.
#pragma once

#include <memory>
#include <string>

namespace paes {

class MpiSession {
 public:
  // Initialises MPI (threads: only the main thread calls MPI). Throws Error
  // when the MPI can't give MPI_THREAD_FUNNELED.
  MpiSession(int* argc, char*** argv);
  // Rank 0: releases ranks still waiting for a job (see finish()); then
  // finalises MPI.
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // This rank among the ranks on its node (MPI_COMM_TYPE_SHARED), and how
  // many they are: a node's CPUs and GPUs are shared out by them.
  int node_rank() const { return node_rank_; }
  int node_size() const { return node_size_; }
  // Ranks other than 0: wait for rank 0's job, run this rank's part of it,
  // then wait for rank 0's exit status, and return it: every rank exits as
  // rank 0 does, after its commit (the message is rank 0's to print).
  int serve();
  // Rank 0: sends its exit status to the other ranks, once: they wait for a
  // job, or, after one, for the outcome of its commit. Throws nothing.
  void finish(int status);
  // Rank 0: the other ranks got a job (they wait for finish() after it).
  void job_sent() { released_ = true; }
  // Rank 0: removes the temporary output at `path` if this process dies
  // before finish() (see MpiSession::Watch in engine/mpi/mpi_session.cpp).
  void watch_temporary(const std::string& path);

  static MpiSession* current();

 private:
  int wait_for_status();
  struct Watch;
  std::unique_ptr<Watch> watch_;
  int rank_ = 0;
  int size_ = 1;
  int node_rank_ = 0;
  int node_size_ = 1;
  bool released_ = false;  // a job was sent
  bool finished_ = false;  // the status was sent
};

}  // namespace paes
