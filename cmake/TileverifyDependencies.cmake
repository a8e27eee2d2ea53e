# Every dependency comes through find_package. Debian 12 ships config files for
# Boost, Eigen and doctest; Z3, GMP and MPFR get the small Find modules in this folder.
find_package(Threads REQUIRED)
find_package(Boost 1.71 REQUIRED)           # Multiprecision (header-only); Graph comes later
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
find_package(Z3 REQUIRED)
find_package(GMP REQUIRED)
find_package(MPFR REQUIRED)
find_package(nlohmann_json 3 REQUIRED)   # spec files and JSON reports
find_package(CLI11 REQUIRED)             # the tileverify command's arguments

# CUDA is optional and nothing in the core needs it: detect it for the helpers
# that will use it, never fail without it.
include(CheckLanguage)
check_language(CUDA)
if(CMAKE_CUDA_COMPILER)
  set(TILEVERIFY_HAVE_CUDA ON)
else()
  set(TILEVERIFY_HAVE_CUDA OFF)
endif()
