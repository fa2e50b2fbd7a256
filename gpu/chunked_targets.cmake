# The chunked implementation (issue 8), included by gpu/targets.cmake:
#   vla_chunked   vla::impl::run_chunked: the CPU twin (the chunked reference at
#                 float with the kernel's operand rounding) and, with CUDA, the
#                 chunked kernel, the scan form's two stages and their launchers.
# The twin needs Eigen's headers: the Debian package in the full build; in the
# standalone build (no Debian dependencies) pass -DVLA_EIGEN_DIR=<dir holding Eigen/>.
set(_gpu_ch ${CMAKE_CURRENT_LIST_DIR})
if(TARGET Eigen3::Eigen)
  set(_vla_eigen Eigen3::Eigen)
else()
  find_path(VLA_EIGEN_INCLUDE Eigen/Dense HINTS ${VLA_EIGEN_DIR} /usr/include/eigen3)
  if(VLA_EIGEN_INCLUDE)
    add_library(vla_eigen_headers INTERFACE)
    target_include_directories(vla_eigen_headers SYSTEM INTERFACE ${VLA_EIGEN_INCLUDE})
    set(_vla_eigen vla_eigen_headers)
  endif()
endif()
if(_vla_eigen)
  add_library(vla_chunked STATIC ${_gpu_ch}/src/chunked_impl.cpp)
  target_include_directories(vla_chunked PUBLIC ${_gpu_ch}/include ${_gpu_ch}/../reference/include)
  target_link_libraries(vla_chunked PUBLIC vla_twin vla_error_model ${_vla_eigen})
  if(VLA_HAVE_CUDA)
    target_sources(vla_chunked PRIVATE ${_gpu_ch}/cuda/chunked_run.cu ${_gpu_ch}/cuda/chunked_fp32.cu ${_gpu_ch}/cuda/chunked_bf16.cu
                                       ${_gpu_ch}/cuda/chunked_tf32.cu
                                       # the scan form (docs/CHUNKED.md section 8): stage 1, stage 2, launcher
                                       ${_gpu_ch}/cuda/scan_gate.cu ${_gpu_ch}/cuda/scan_state.cu ${_gpu_ch}/cuda/scan_run.cu)
    # Same rounding discipline as the fused kernels: explicit FMAs only, IEEE division and square root.
    target_compile_options(vla_chunked PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false -prec-div=true -prec-sqrt=true -ftz=false
                                               -Xptxas=-warn-spills>)
  endif()
else()
  message(STATUS "vla_chunked: Eigen headers not found (set VLA_EIGEN_DIR): chunked implementation not built")
endif()
