# The gpu/ targets, shared by gpu/CMakeLists.txt (the full build) and
# gpu/standalone/ (the device machine's minimal build: no Boost, MPFR, GTest).
#   vla_twin         vla::impl::run (CPU twins; the CUDA backend when VLA_HAVE_CUDA), run_plain
#   vla_cuda         the fused kernels and their launcher (only with CUDA)
#   vla_error_model  the error model (error_model.hpp), reused by the gate
set(_gpu ${CMAKE_CURRENT_LIST_DIR})

add_library(vla_error_model STATIC ${_gpu}/src/error_model.cpp ${_gpu}/src/error_baselines.cpp)
# The baselines run the recurrence through the reference's driver (header only).
target_include_directories(vla_error_model PUBLIC ${_gpu}/include PRIVATE ${_gpu}/../reference/include)
target_link_libraries(vla_error_model PUBLIC vla_core)

add_library(vla_twin STATIC ${_gpu}/src/impl.cpp ${_gpu}/src/host_runs.cpp ${_gpu}/src/inputs.cpp)
target_include_directories(vla_twin PUBLIC ${_gpu}/include)
target_link_libraries(vla_twin PUBLIC vla_core)

if(VLA_HAVE_CUDA)
  find_package(CUDAToolkit REQUIRED)
  # CMake 3.25 does not know nvcc 13's C++20 flags: name them.
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  add_library(vla_cuda STATIC ${_gpu}/src/fused_params.cpp ${_gpu}/cuda/fused_run.cu ${_gpu}/cuda/fused_fp32.cu ${_gpu}/cuda/fused_bf16.cu
                              ${_gpu}/cuda/fused_bf16_state.cu)
  target_include_directories(vla_cuda PUBLIC ${_gpu}/include)
  target_link_libraries(vla_cuda PUBLIC vla_core CUDA::cudart)
  target_compile_definitions(vla_cuda PUBLIC VLA_HAVE_CUDA=1)
  # Rounding points are part of the spec: no contraction of a*b+c into an FMA;
  # the only FMAs are the explicit vfma calls that the twin reproduces. IEEE
  # division and square root (nvcc's defaults, stated so nobody "optimises" them).
  target_compile_options(vla_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false -prec-div=true -prec-sqrt=true -ftz=false
                                          -Xptxas=-warn-spills>)
  target_link_libraries(vla_twin PUBLIC vla_cuda)
endif()
include(${CMAKE_CURRENT_LIST_DIR}/chunked_targets.cmake)
