# CPack pre-build script: removes the RPATH of the programs and the library staged for the Debian
# packages. It serves a relocatable `cmake --install` tree; under /usr the loader finds
# libtdfx-core.so.0 in the multiarch folder, and Debian forbids a custom search path there.
file(GLOB_RECURSE _staged LIST_DIRECTORIES false "${CPACK_TEMPORARY_DIRECTORY}/*")
foreach(_file IN LISTS _staged)
  if(_file MATCHES "/bin/tdfx(-cli)?$|/libtdfx-core\\.so\\.[0-9]+\\.[0-9]+\\.[0-9]+$" AND NOT IS_SYMLINK "${_file}")
    file(RPATH_REMOVE FILE "${_file}")
  endif()
endforeach()
