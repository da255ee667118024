/* The smallest MPI job: every rank initialises MPI, meets the others in a
 * barrier and finalizes. tests/mpi/concurrent_launches.py starts many of them
 * at once to show that launches side by side don't fail in the launcher's
 * own set-up (Open MPI 4.1's shared session directories, issue 37). */
#include <mpi.h>

int main(int argc, char **argv) {
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
  if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS) return 1;
  return MPI_Finalize() == MPI_SUCCESS ? 0 : 1;
}
