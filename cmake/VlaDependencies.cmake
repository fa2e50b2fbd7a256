# Every dependency comes from Debian's archive (scripts/setup.sh installs them);
# nothing is downloaded at configure time.
find_package(Boost 1.74 REQUIRED)
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
find_package(GTest REQUIRED)
find_package(rapidcheck REQUIRED)
find_package(benchmark REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3 REQUIRED)

# MPFR, MPFI and GMP ship no CMake config: find them by hand.
find_path(MPFR_INCLUDE_DIR mpfr.h REQUIRED)
find_library(MPFR_LIBRARY mpfr REQUIRED)
find_path(MPFI_INCLUDE_DIR mpfi.h REQUIRED)
find_library(MPFI_LIBRARY mpfi REQUIRED)
find_library(GMP_LIBRARY gmp REQUIRED)
find_library(QUADMATH_LIBRARY quadmath PATHS /usr/lib/gcc/x86_64-linux-gnu/12 REQUIRED)

add_library(vla_mp INTERFACE)
target_include_directories(vla_mp INTERFACE ${MPFR_INCLUDE_DIR} ${MPFI_INCLUDE_DIR})
target_link_libraries(vla_mp INTERFACE Boost::headers Eigen3::Eigen ${MPFI_LIBRARY} ${MPFR_LIBRARY} ${GMP_LIBRARY} ${QUADMATH_LIBRARY})
target_compile_options(vla_mp INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-fext-numeric-literals>)
