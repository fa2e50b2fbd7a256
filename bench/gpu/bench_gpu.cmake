# The GPU benchmark (CUDA events): shared by bench/gpu/CMakeLists.txt and gpu/standalone/.
set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")  # CMake 3.25 lacks nvcc 13's C++20 flag
set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
add_executable(bench_gpu ${CMAKE_CURRENT_LIST_DIR}/bench_gpu.cu)
target_link_libraries(bench_gpu PRIVATE vla_twin vla_cuda)
# Timing experiments with other block layouts (not shipped, not tested against the twin).
add_executable(bench_gpu_variants ${CMAKE_CURRENT_LIST_DIR}/bench_variants.cu)
target_link_libraries(bench_gpu_variants PRIVATE vla_cuda)
target_compile_options(bench_gpu_variants PRIVATE --fmad=false)
# Latencies of the dependent chain's operations (clock64 microbenchmarks): the
# terms of the per-step floor (reports/gpu/FLOOR.md). Needs sm_90 (clusters).
add_executable(bench_gpu_latency ${CMAKE_CURRENT_LIST_DIR}/bench_latency.cu)
target_link_libraries(bench_gpu_latency PRIVATE vla_cuda)
set_target_properties(bench_gpu_latency PROPERTIES CUDA_ARCHITECTURES 90)
# Where kernel v5's step goes: per-role clocks and the push variants of the
# cluster kernel (its probe parameter; reports/gpu/FLOOR.md). Needs sm_90.
add_executable(bench_cluster_roles ${CMAKE_CURRENT_LIST_DIR}/bench_cluster_roles.cu)
target_link_libraries(bench_cluster_roles PRIVATE vla_cuda)
target_compile_options(bench_cluster_roles PRIVATE --fmad=false -prec-div=true -prec-sqrt=true -ftz=false)
# Not part of "all" (CI): bench/gpu/run_cluster_roles.sh builds it by name.
set_target_properties(bench_cluster_roles PROPERTIES CUDA_ARCHITECTURES 90 EXCLUDE_FROM_ALL ON)
