# The man page (paes.1) and the bash and zsh completions, written at build
# time by the built paes from its own CLI11 command line (`paes man`, `paes
# completion SHELL`: cli/docs_command.cpp), so that they can't say other than
# --help. PaesInstall.cmake installs them.
set(PAES_DOCS_DIR ${PROJECT_BINARY_DIR}/share)
set(PAES_DOCS_FILES ${PAES_DOCS_DIR}/paes.1 ${PAES_DOCS_DIR}/paes.bash ${PAES_DOCS_DIR}/_paes)
add_custom_command(
  OUTPUT ${PAES_DOCS_FILES}
  COMMAND ${CMAKE_COMMAND} -DPAES=$<TARGET_FILE:paes_cli> -DOUT=${PAES_DOCS_DIR}
          -P ${PROJECT_SOURCE_DIR}/cmake/PaesDocsWrite.cmake
  DEPENDS paes_cli ${PROJECT_SOURCE_DIR}/cmake/PaesDocsWrite.cmake
  COMMENT "Writing paes.1 and the bash and zsh completions from paes' command line"
  VERBATIM)
add_custom_target(paes_docs ALL DEPENDS ${PAES_DOCS_FILES})
