// What the two halves of the mpi engine share: mpi_session.cpp (the MPI
// process's life-cycle: start, serve, the exit status, the temporary's watch,
// finalize) and mpi_engine.cpp (the ranks' work on a job: the hand-off of
// rank 0's job and each rank's range). Here: the kinds of message rank 0
// broadcasts, the collectives that wait without spinning, and the entry by
// which a serving rank runs the job it was sent. Internal to paes_mpi.
#pragma once

#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <cstdint>

#include "paes/secret.hpp"

namespace paes {

// What rank 0 broadcasts to ranks waiting in MpiSession::serve(): a job, or
// that there is none (with rank 0's exit status).
enum class MpiMessage : std::uint64_t { job = 1, done = 2 };

// Every collective here waits without spinning. A rank waits long in some:
// for rank 0's job (rank 0 may be asking for a passphrase), while rank 0 runs
// a sequential job alone, during rank 0's commit. A blocking MPI call polls at
// full speed there (MPICH over UCX: a whole core per waiting rank, taken from
// the threads of rank 0 on the same node), so each collective is started in
// its nonblocking form and tested with sleeps growing from 1 us to 4 ms: a
// phase that made a rank wait ends at most 4 ms late, and a waiting rank uses
// about 1% of a core (each test runs the MPI's progress engine: tens of us).
// Every rank starts each collective the same way (MPI never matches a
// blocking collective with a nonblocking one): these, and one blocking
// barrier before MPI_Finalize (~MpiSession).
template <typename Start>
void collective(Start start) {
  MPI_Request request = MPI_REQUEST_NULL;
  start(&request);
  long sleep_ns = 1'000;
  for (;;) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    const timespec pause{0, sleep_ns};
    ::nanosleep(&pause, nullptr);
    sleep_ns = std::min(sleep_ns * 2, 4'000'000L);
  }
}

inline void bcast(void* data, int count, MPI_Datatype type, int root) {
  collective([&](MPI_Request* r) { MPI_Ibcast(data, count, type, root, MPI_COMM_WORLD, r); });
}

inline void allreduce(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op) {
  collective([&](MPI_Request* r) { MPI_Iallreduce(in, out, count, type, op, MPI_COMM_WORLD, r); });
}

// Rank 0 broadcasts a message kind and a payload (or a status).
inline void broadcast_message(MpiMessage kind, const SecretBytes* payload, std::uint64_t status) {
  std::uint64_t head[2] = {static_cast<std::uint64_t>(kind), payload ? payload->size() : status};
  bcast(head, 2, MPI_UINT64_T, 0);
  if (payload) bcast(const_cast<std::uint8_t*>(payload->data()), static_cast<int>(payload->size()), MPI_BYTE, 0);
}

// Ranks other than 0, in MpiSession::serve(): decodes rank 0's job from its
// payload, rebuilds it on this rank's backend and device and runs this rank's
// part of it (mpi_engine.cpp). Throws the Error every rank agreed on when any
// rank failed.
void serve_job(const SecretBytes& payload);

}  // namespace paes
