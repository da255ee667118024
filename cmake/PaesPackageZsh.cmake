# CPack runs this after staging each package's files (PaesPackage.cmake): the
# zsh completion moves to the directory Debian's zsh reads under /usr.
file(GLOB paes_zsh_dirs LIST_DIRECTORIES true
     "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*/usr/share/zsh/site-functions")
foreach(dir IN LISTS paes_zsh_dirs)
  file(RENAME ${dir} ${dir}/../vendor-completions)
endforeach()
