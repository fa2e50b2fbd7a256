# The chunked kernel's benchmark (CUDA events): included by gpu/standalone/ and bench/gpu/CMakeLists.txt.
if(TARGET vla_chunked)
  add_executable(bench_chunked ${CMAKE_CURRENT_LIST_DIR}/bench_chunked.cu)
  target_link_libraries(bench_chunked PRIVATE vla_chunked vla_twin vla_cuda)
endif()
