# Installing libpaes: the library, its public headers (include/paes, never
# src/), the paes tool, a CMake package (find_package(paes) gives paes::paes,
# and paes::paes_mpi, the mpi engine, where MPI was found) and a pkg-config
# file (paes.pc, libpaes without MPI), and paes' man page and completions.
# libpaes is a static library, so whatever it links, PRIVATE or PUBLIC, a
# consumer links too: the package config finds those dependencies again
# (find_dependency) and paes.pc names them. Components: tool (paes, its man
# page and completions), mpi (paes-mpi) and dev (the library); the Debian
# packages (PaesPackage.cmake) are made of the first two.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(PAES_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/paes)

set(PAES_INSTALLED_LIBRARIES paes)
if(TARGET paes_mpi)
  list(APPEND PAES_INSTALLED_LIBRARIES paes_mpi)
endif()
install(TARGETS ${PAES_INSTALLED_LIBRARIES} EXPORT paesTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/paes
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev
        FILES_MATCHING PATTERN "*.hpp")
install(TARGETS paes_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tool)
if(TARGET paes_mpi_cli)  # beside paes, which execs it for --engine mpi
  install(TARGETS paes_mpi_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT mpi)
endif()

# paes' man page and shell completions (PaesDocs.cmake), where man, bash-completion
# and zsh look for them.
install(FILES ${PAES_DOCS_DIR}/paes.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT tool)
install(FILES ${PAES_DOCS_DIR}/paes.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME paes COMPONENT tool)
install(FILES ${PAES_DOCS_DIR}/_paes DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions COMPONENT tool)

install(EXPORT paesTargets NAMESPACE paes:: DESTINATION ${PAES_INSTALL_CMAKEDIR} COMPONENT dev)

# What this build compiled in; paesConfig.cmake finds the same dependencies.
set(PAES_CONFIG_HAVE_MPI ${MPI_CXX_FOUND})
set(PAES_CONFIG_HAVE_OPENCL ${OpenCL_FOUND})
set(PAES_CONFIG_HAVE_CUDA ${PAES_HAVE_CUDA_BACKEND})
foreach(flag PAES_CONFIG_HAVE_MPI PAES_CONFIG_HAVE_OPENCL PAES_CONFIG_HAVE_CUDA)
  if(${flag})
    set(${flag} ON)
  else()
    set(${flag} OFF)
  endif()
endforeach()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/paesConfig.cmake.in
  ${PROJECT_BINARY_DIR}/paesConfig.cmake
  INSTALL_DESTINATION ${PAES_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the API, so only the same minor matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/paesConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/paesConfig.cmake ${PROJECT_BINARY_DIR}/paesConfigVersion.cmake
        DESTINATION ${PAES_INSTALL_CMAKEDIR} COMPONENT dev)

# paes.pc: the same link interface for builds without CMake. Its prefix is
# found from the file's own place (${pcfiledir}), so `cmake --install
# --prefix` anywhere gives a working file.
file(RELATIVE_PATH PAES_PC_TO_PREFIX
     /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" PAES_PC_TO_PREFIX "${PAES_PC_TO_PREFIX}")
get_target_property(PAES_PC_DEFINITIONS paes INTERFACE_COMPILE_DEFINITIONS)
if(PAES_PC_DEFINITIONS)
  list(TRANSFORM PAES_PC_DEFINITIONS PREPEND -D)
else()
  set(PAES_PC_DEFINITIONS "")
endif()
# ipsec-mb, the OpenCL loader, libssh and libsodium are opened at run time
# (dlopen), so they are not linked; so is libgomp in a GCC build.
set(PAES_PC_LIBS -pthread -ldl)
if(NOT PAES_OPENMP_AT_FIRST_USE)
  list(PREPEND PAES_PC_LIBS ${OpenMP_CXX_FLAGS})
endif()
if(PAES_HAVE_CUDA_BACKEND)
  list(APPEND PAES_PC_LIBS ${CUDA_cudart_static_LIBRARY} -ldl -lrt)
endif()
list(JOIN PAES_PC_DEFINITIONS " " PAES_PC_DEFINITIONS)
list(JOIN PAES_PC_LIBS " " PAES_PC_LIBS)
configure_file(${PROJECT_SOURCE_DIR}/cmake/paes.pc.in ${PROJECT_BINARY_DIR}/paes.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/paes.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
