# CPack runs this after staging each package's files (PaesPackage.cmake),
# for what Debian's policy asks of a package and `cmake --install` leaves
# out (lintian checks it; tests/package/test_package.sh runs lintian):
#   - the zsh completion moves to the directory Debian's zsh reads under /usr;
#   - man pages are gzip -9n'd (no name or time stamp in the header);
#   - paes-mpi gets a man page, ".so man1/paes.1": it is paes with its mpi
#     engine, and its package depends on paes, which has the page;
#   - each package's usr/share/doc/<package>/ gets a copyright file and a
#     changelog.gz (a native package's: its version, from README.md).
file(GLOB paes_zsh_dirs LIST_DIRECTORIES true
     "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*/usr/share/zsh/site-functions")
foreach(dir IN LISTS paes_zsh_dirs)
  file(RENAME ${dir} ${dir}/../vendor-completions)
endforeach()

string(TIMESTAMP paes_changelog_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
foreach(component tool mpi)
  set(root "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/${component}")
  if(NOT IS_DIRECTORY "${root}")
    continue()
  endif()
  if(component STREQUAL "tool")
    set(package paes)
  else()
    set(package paes-mpi)
    file(MAKE_DIRECTORY "${root}/usr/share/man/man1")
    file(WRITE "${root}/usr/share/man/man1/paes-mpi.1" ".so man1/paes.1\n")
  endif()
  file(GLOB pages "${root}/usr/share/man/man1/*.1")
  foreach(page IN LISTS pages)
    execute_process(COMMAND gzip -9nf "${page}" RESULT_VARIABLE failed)
    if(failed)
      message(FATAL_ERROR "gzip ${page} failed")
    endif()
  endforeach()
  set(doc "${root}/usr/share/doc/${package}")
  file(MAKE_DIRECTORY "${doc}")
  file(COPY_FILE "${CPACK_PAES_COPYRIGHT_FILE}" "${doc}/copyright")
  file(WRITE "${doc}/changelog"
       "${package} (${CPACK_PACKAGE_VERSION}) unstable; urgency=medium\n\n"
       "  * Version ${CPACK_PACKAGE_VERSION}; what it does is in README.md and docs/.\n\n"
       " -- ${CPACK_PACKAGE_CONTACT}  ${paes_changelog_date}\n")
  execute_process(COMMAND gzip -9nf "${doc}/changelog" RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "gzip ${doc}/changelog failed")
  endif()
endforeach()
