# FindZ3: the Z3 SMT solver's C/C++ API (Debian's libz3-dev has no CMake config).
# Provides the imported target z3::libz3 and Z3_FOUND.
find_package(Z3 CONFIG QUIET)
if(TARGET z3::libz3)
  set(Z3_FOUND TRUE)
  return()
endif()
find_path(Z3_INCLUDE_DIR NAMES z3++.h PATH_SUFFIXES z3)
find_library(Z3_LIBRARY NAMES z3 libz3)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Z3 REQUIRED_VARS Z3_LIBRARY Z3_INCLUDE_DIR)
if(Z3_FOUND AND NOT TARGET z3::libz3)
  add_library(z3::libz3 UNKNOWN IMPORTED)
  set_target_properties(z3::libz3 PROPERTIES
    IMPORTED_LOCATION "${Z3_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${Z3_INCLUDE_DIR}")
endif()
mark_as_advanced(Z3_INCLUDE_DIR Z3_LIBRARY)
