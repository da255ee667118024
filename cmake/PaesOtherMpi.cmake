# paes and paes-mpi once more, for a second MPI installed beside the first
# (PAES_OTHER_MPI_FLAVOR: Debian's Open MPI beside MPICH), from this tree's
# libpaes and CLI objects: only the mpi engine and main() are compiled again,
# into <build>/<flavor>/. The mpi tests whose behaviour depends on the
# launcher run against them (tests/CMakeLists.txt), so CI needs no second
# build of libpaes for the second MPI. Never installed or packaged: a paes
# install has one MPI, PAES_MPI_FLAVOR's (the openmpi preset builds a whole
# tree for Open MPI).
#
# The second MPI's flags come from its compiler wrapper (FindMPI's cache
# holds the first's): Open MPI's mpicxx --showme:compile/--showme:link, or
# MPICH's -compile-info/-link-info, which begin with the compiler's name.
set(PAES_OTHER_MPI_FLAVOR "" CACHE STRING
    "A second installed MPI (Debian: openmpi or mpich) to build paes-mpi for too, in <build>/<flavor>, for its tests")
if(NOT PAES_OTHER_MPI_FLAVOR OR NOT TARGET paes_mpi)
  return()
endif()
if(PAES_OTHER_MPI_FLAVOR STREQUAL PAES_MPI_FLAVOR)
  message(FATAL_ERROR "PAES_OTHER_MPI_FLAVOR (${PAES_OTHER_MPI_FLAVOR}) is PAES_MPI_FLAVOR: name the other MPI")
endif()

set(flavor ${PAES_OTHER_MPI_FLAVOR})
find_program(PAES_OTHER_MPICXX mpicxx.${flavor})
find_program(PAES_OTHER_MPIEXEC mpiexec.${flavor})
if(NOT PAES_OTHER_MPICXX OR NOT PAES_OTHER_MPIEXEC)
  message(STATUS "paes: no paes-mpi for ${flavor} (mpicxx.${flavor} or mpiexec.${flavor} not found)")
  return()
endif()

function(paes_mpi_wrapper_flags out open_mpi_option mpich_option)
  execute_process(COMMAND ${PAES_OTHER_MPICXX} ${open_mpi_option} RESULT_VARIABLE status
                  OUTPUT_VARIABLE flags ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT status EQUAL 0)
    execute_process(COMMAND ${PAES_OTHER_MPICXX} ${mpich_option} OUTPUT_VARIABLE flags
                    OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
    string(REGEX REPLACE "^[^ ]+ ?" "" flags "${flags}")  # the compiler's name
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  set(${out} ${flags} PARENT_SCOPE)
endfunction()
paes_mpi_wrapper_flags(compile_flags --showme:compile -compile-info)
paes_mpi_wrapper_flags(link_flags --showme:link -link-info)

# Include directories as system ones (the MPI's headers are not ours to hold
# to -Werror), the rest of the compile flags as they are; libraries (-l) after
# the objects that need them, the other link flags before.
set(include_dirs)
set(other_compile_flags)
foreach(flag IN LISTS compile_flags)
  if(flag MATCHES "^-I(.+)")
    list(APPEND include_dirs ${CMAKE_MATCH_1})
  elseif(NOT flag MATCHES "^-Wl,|^-L|^-l")
    list(APPEND other_compile_flags ${flag})
  endif()
endforeach()
set(libraries)
set(other_link_flags)
foreach(flag IN LISTS link_flags)
  if(flag MATCHES "^-l(.+)")
    list(APPEND libraries ${CMAKE_MATCH_1})
  else()
    list(APPEND other_link_flags ${flag})
  endif()
endforeach()
add_library(paes_other_mpi_flags INTERFACE)
target_include_directories(paes_other_mpi_flags SYSTEM INTERFACE ${include_dirs})
target_compile_options(paes_other_mpi_flags INTERFACE ${other_compile_flags})
target_link_options(paes_other_mpi_flags INTERFACE ${other_link_flags})
target_link_libraries(paes_other_mpi_flags INTERFACE ${libraries})

try_run(version_run version_compiled ${CMAKE_BINARY_DIR}/${flavor}-library-version
        SOURCES ${CMAKE_CURRENT_LIST_DIR}/mpi_library_version.cpp
        CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${include_dirs}"
        LINK_OPTIONS ${other_link_flags}
        LINK_LIBRARIES ${libraries}
        COMPILE_OUTPUT_VARIABLE version_compile_output
        RUN_OUTPUT_VARIABLE other_mpi_library)
if(NOT version_compiled OR NOT version_run EQUAL 0)
  message(FATAL_ERROR "paes: ${PAES_OTHER_MPICXX}'s flags build no program that runs:\n${version_compile_output}")
endif()

add_library(paes_mpi_${flavor} STATIC src/engine/mpi/mpi_session.cpp src/engine/mpi/mpi_engine.cpp)
target_include_directories(paes_mpi_${flavor} PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(paes_mpi_${flavor} PUBLIC paes paes_other_mpi_flags)
target_compile_definitions(paes_mpi_${flavor} PUBLIC PAES_HAVE_MPI)
target_compile_options(paes_mpi_${flavor} PRIVATE "$<$<COMPILE_LANGUAGE:C,CXX>:${PAES_WARNINGS}>")

set(PAES_OTHER_MPI_DIR ${CMAKE_BINARY_DIR}/${flavor})
add_executable(paes_mpi_cli_${flavor} src/cli/main.cpp)
target_link_libraries(paes_mpi_cli_${flavor} PRIVATE paes_mpi_${flavor})
add_executable(paes_cli_${flavor} src/cli/main.cpp)
foreach(program paes_mpi_cli_${flavor} paes_cli_${flavor})
  paes_link_cli(${program} MPI_LIBRARY "${other_mpi_library}" MPI_LAUNCHER "${PAES_OTHER_MPIEXEC}")
  target_compile_options(${program} PRIVATE ${PAES_WARNINGS})
  set_target_properties(${program} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PAES_OTHER_MPI_DIR})
endforeach()
set_target_properties(paes_mpi_cli_${flavor} PROPERTIES OUTPUT_NAME paes-mpi)
set_target_properties(paes_cli_${flavor} PROPERTIES OUTPUT_NAME paes)
add_dependencies(paes_cli_${flavor} paes_mpi_cli_${flavor})  # paes hands --engine mpi to the paes-mpi beside it
message(STATUS "paes: paes and paes-mpi for ${flavor} too, in ${PAES_OTHER_MPI_DIR} (${PAES_OTHER_MPICXX})")
