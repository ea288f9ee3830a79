# `cmake --install`: the C++ package. Headers (include/kiln and, under include/kiln/internal,
# the src/ headers they forward to), the libraries, kilnConfig.cmake with its version file,
# and kiln.pc, so that `find_package(kiln CONFIG REQUIRED)` + `kiln::kiln` or pkg-config work.
# Native: kiln::kiln (static) and kiln::kiln_shared. Emscripten: kiln::kiln (single-threaded)
# and kiln::kiln_mt (pthreads; its link options carry the pool's --pre-js from share/kiln).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(DIRECTORY "${CMAKE_SOURCE_DIR}/include/kiln" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY "${CMAKE_SOURCE_DIR}/src/" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kiln/internal
        FILES_MATCHING PATTERN "*.h")

if(EMSCRIPTEN)
  set(_kiln_targets kiln_mt kiln)
  install(FILES "${CMAKE_SOURCE_DIR}/src/backend/wasm/wasm_threads_pre.js" DESTINATION ${CMAKE_INSTALL_DATADIR}/kiln)
  set(KILN_PC_LIBS "-lkiln -fexceptions -sALLOW_TABLE_GROWTH=1")
else()
  set(_kiln_targets kiln kiln_shared)
  set(KILN_PC_LIBS "-lkiln -pthread")
  foreach(lib ${CMAKE_DL_LIBS})
    string(APPEND KILN_PC_LIBS " -l${lib}")
  endforeach()
endif()
# kiln (single-threaded) is outside `all` under Emscripten (the `js` preset builds it):
# OPTIONAL installs it when it was built.
install(TARGETS ${_kiln_targets} EXPORT kilnTargets OPTIONAL
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)

configure_package_config_file("${CMAKE_SOURCE_DIR}/cmake/kilnConfig.cmake.in"
  "${CMAKE_BINARY_DIR}/kilnConfig.cmake" INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)
write_basic_package_version_file("${CMAKE_BINARY_DIR}/kilnConfigVersion.cmake" COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_BINARY_DIR}/kilnConfig.cmake" "${CMAKE_BINARY_DIR}/kilnConfigVersion.cmake"
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)

# kiln.pc finds the prefix from its own place (pkg-config's ${pcfiledir}), so that
# `cmake --install --prefix` anywhere gives a working file.
file(RELATIVE_PATH KILN_PC_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
string(REGEX REPLACE "/$" "" KILN_PC_PREFIX "${KILN_PC_PREFIX}")
configure_file("${CMAKE_SOURCE_DIR}/cmake/kiln.pc.in" "${CMAKE_BINARY_DIR}/kiln.pc" @ONLY)
install(FILES "${CMAKE_BINARY_DIR}/kiln.pc" DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
