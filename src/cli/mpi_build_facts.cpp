// Compiled into each program, with PAES_MPI_LIBRARY and PAES_MPI_LAUNCHER
// where it has an mpi engine (see mpi_build_facts.hpp).
#include "cli/mpi_build_facts.hpp"

namespace paes::cli {

std::optional<MpiBuildFacts> mpi_build_facts() {
#ifdef PAES_MPI_LIBRARY
  return MpiBuildFacts{PAES_MPI_LIBRARY, PAES_MPI_LAUNCHER};
#else
  return std::nullopt;
#endif
}

}  // namespace paes::cli
