# `cmake --install` puts the library, headers and a package config in place, so
# that other projects can `find_package(tileverify)` and link tileverify::tileverify.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS tileverify_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS tileverify EXPORT tileverifyTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tileverify DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(TILEVERIFY_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tileverify)
install(EXPORT tileverifyTargets NAMESPACE tileverify:: DESTINATION ${TILEVERIFY_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tileverifyConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tileverifyConfig.cmake INSTALL_DESTINATION ${TILEVERIFY_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tileverifyConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/tileverifyConfig.cmake
  ${PROJECT_BINARY_DIR}/tileverifyConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/FindZ3.cmake
  ${PROJECT_SOURCE_DIR}/cmake/FindGMP.cmake
  ${PROJECT_SOURCE_DIR}/cmake/FindMPFR.cmake
  DESTINATION ${TILEVERIFY_CMAKE_DIR})
