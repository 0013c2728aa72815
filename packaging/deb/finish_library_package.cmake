# CPack post-build script: finishes libtdfx-core0's package where CPackDeb (CMake 3.25) cannot.
# - It writes a postinst and a postrm calling ldconfig for any package with a shared library
#   under /usr/lib, with no switch to leave them out. Debian wants the `activate-noawait ldconfig`
#   trigger instead (deb/libtdfx-core0/triggers, which the package carries) and no maintainer scripts: removed.
# - It has no Multi-Arch field. The library lives in the multiarch folder, and two architectures'
#   copies can be installed side by side: `Multi-Arch: same` is added.
find_program(_dpkg_deb dpkg-deb REQUIRED)
foreach(_deb IN LISTS CPACK_PACKAGE_FILES)
  get_filename_component(_name "${_deb}" NAME)
  if(NOT _name MATCHES "^libtdfx-core[0-9]+_")
    continue()
  endif()
  set(_tree "${CPACK_TEMPORARY_DIRECTORY}/rebuild-${_name}")
  file(REMOVE_RECURSE "${_tree}")
  execute_process(COMMAND "${_dpkg_deb}" --raw-extract "${_deb}" "${_tree}" COMMAND_ERROR_IS_FATAL ANY)
  file(REMOVE "${_tree}/DEBIAN/postinst" "${_tree}/DEBIAN/postrm")
  file(READ "${_tree}/DEBIAN/control" _control)
  if(NOT _control MATCHES "(^|\n)Multi-Arch:")
    string(REGEX REPLACE "(^|\n)(Architecture:[^\n]*\n)" "\\1\\2Multi-Arch: same\n" _control "${_control}")
    file(WRITE "${_tree}/DEBIAN/control" "${_control}")
  endif()
  execute_process(COMMAND "${_dpkg_deb}" --root-owner-group --build "${_tree}" "${_deb}"
                  OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
  file(REMOVE_RECURSE "${_tree}")
endforeach()
