// The MPI paes-mpi was built with and its launcher, as `paes info` names them.
// Known to the build alone (CMake's FindMPI), so the plain paes never loads an
// MPI library to say it. Defined in mpi_build_facts.cpp, which each program
// compiles with its own MPI's facts (cmake: paes_link_cli), so one build of
// the CLI's objects serves paes built for MPICH and for Open MPI alike.
#pragma once

#include <optional>
#include <string>

namespace paes::cli {

struct MpiBuildFacts {
  std::string library;   // MPI_Get_library_version's first line ("MPICH Version: 4.0.2")
  std::string launcher;  // its mpiexec ("/usr/bin/mpiexec.mpich")
};

// None where the program has no mpi engine beside it.
std::optional<MpiBuildFacts> mpi_build_facts();

}  // namespace paes::cli
