// Prints MPI_Get_library_version's text, which MPI allows before MPI_Init: the
// configure step of the second MPI (PaesOtherMpi.cmake) runs it without a
// launcher, as FindMPI does for the first.
#include <mpi.h>

#include <cstdio>

int main() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  if (MPI_Get_library_version(version, &len) != MPI_SUCCESS) return 1;
  std::fwrite(version, 1, static_cast<std::size_t>(len), stdout);
  return 0;
}
