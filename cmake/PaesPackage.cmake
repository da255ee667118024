# Debian packages, made by `cpack -G DEB` in a build tree (never by the
# build): paes (the tool, its man page and completions) and, where the mpi
# engine was built, paes-mpi (paes-mpi, which `paes --engine mpi` runs).
# dpkg-shlibdeps writes what each depends on from what its binary links:
# OpenSSL, and for paes-mpi the MPI it was built with; the CUDA runtime and
# paes' libstdc++ are linked in (CUDA::cudart_static, -static-libstdc++), so
# no package is needed for them. What paes opens at run time (dlopen: libssh
# and libsodium for ssh keys, ipsec-mb, the OpenCL loader, and libgomp in a
# GCC build) dpkg-shlibdeps can't see: PAES_TOOL_RUNTIME_DEPENDS names those packages, at the versions
# of their shlibs files (Debian 12), and CPack adds what it found. The library (component dev) is not packaged: its
# consumers need the -dev packages of all of those and the CUDA toolkit's
# static runtime, which Debian does not ship.
set(PAES_PACKAGE_MAINTAINER "paes maintainers <maintainers@users.noreply.a-seed-8df63809.example>"
    CACHE STRING "The Maintainer field of the Debian packages")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME paes)
set(CPACK_PACKAGE_CONTACT "${PAES_PACKAGE_MAINTAINER}")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL tool)
if(TARGET paes_mpi_cli)
  list(APPEND CPACK_COMPONENTS_ALL mpi)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)

set(PAES_TOOL_RUNTIME_DEPENDS "libssh-4 (>= 0.10.6)" "libsodium23")
if(PAES_OPENMP_AT_FIRST_USE)
  list(APPEND PAES_TOOL_RUNTIME_DEPENDS "libgomp1")
endif()
if(PAES_HAVE_IPSEC_MB)
  list(APPEND PAES_TOOL_RUNTIME_DEPENDS "libipsec-mb1 (>= 1.3)")
endif()
if(OpenCL_FOUND)
  list(APPEND PAES_TOOL_RUNTIME_DEPENDS "ocl-icd-libopencl1 (>= 2.3.1) | libopencl1")
endif()
list(JOIN PAES_TOOL_RUNTIME_DEPENDS ", " CPACK_DEBIAN_TOOL_PACKAGE_DEPENDS)

# CPack opens both packages' Description with the project's DESCRIPTION.
set(CPACK_DEBIAN_TOOL_PACKAGE_NAME paes)
set(CPACK_COMPONENT_TOOL_DESCRIPTION "paes encrypts and decrypts files with AES in parallel, on CPU threads or
GPUs, writing the bytes openssl enc writes, and seals files in its own
authenticated format for passphrases and X25519 recipients.")
set(CPACK_DEBIAN_MPI_PACKAGE_NAME paes-mpi)
set(CPACK_COMPONENT_MPI_DEPENDS tool)
set(CPACK_COMPONENT_MPI_DESCRIPTION "paes-mpi is paes with its mpi engine, which splits one file across the
ranks of an MPI job on the nodes of a cluster; paes --engine mpi runs it.")

# Debian's zsh reads completions under /usr from vendor-completions (its
# site-functions is the one under /usr/local, where cmake --install puts
# _paes by default); man pages gzipped, a man page for paes-mpi, and each
# package's copyright and changelog: cmake/PaesPackageFiles.cmake.
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/PaesPackageFiles.cmake)
set(CPACK_PAES_COPYRIGHT_FILE ${PROJECT_SOURCE_DIR}/cmake/debian-copyright)

include(CPack)
