// MPI support: one session per process, and the hand-off by which rank 0 (the
// rank that parses the command line, reads keys, asks for passphrases and
// owns the output) gives the other ranks their part of a job. In libpaes_mpi
// (CMake: paes::paes_mpi, which defines PAES_HAVE_MPI), built where MPI was
// found; libpaes itself never loads MPI. Starting a session is what makes
// make_engine(EngineKind::mpi) work in this process.
#pragma once

namespace paes {

class MpiSession {
 public:
  // Initialises MPI (threads: only the main thread calls MPI). Throws Error
  // when this build has no MPI.
  MpiSession(int* argc, char*** argv);
  // Rank 0: releases ranks still waiting for a job (see finish()); then
  // finalises MPI.
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Ranks other than 0: wait for rank 0's job, run this rank's part of it,
  // and return this process's exit status (0, or 1 when the job failed; the
  // message is rank 0's to print).
  int serve();
  // Rank 0: the exit status for ranks that never got a job (rank 0 failed
  // before the job started, or ran a command without one).
  void finish(int status);
  // Rank 0: the other ranks got a job instead, so finish() sends nothing.
  void job_sent() { released_ = true; }

  static MpiSession* current();

 private:
  int rank_ = 0;
  int size_ = 1;
  bool released_ = false;
};

}  // namespace paes
