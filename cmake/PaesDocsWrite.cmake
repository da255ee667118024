# cmake -DPAES=<built paes> -DOUT=<dir> -P PaesDocsWrite.cmake: the man page
# and completions from the binary (PaesDocs.cmake runs this at build time).
file(MAKE_DIRECTORY ${OUT})
foreach(job "paes.1:man" "paes.bash:completion;bash" "_paes:completion;zsh")
  string(REPLACE ":" ";" job "${job}")
  list(POP_FRONT job file)
  execute_process(COMMAND ${PAES} ${job} OUTPUT_FILE ${OUT}/${file}.new RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "'${PAES} ${job}' failed (${status}): no ${file}")
  endif()
  file(RENAME ${OUT}/${file}.new ${OUT}/${file})  # no half-written page for a later build to take as done
endforeach()
