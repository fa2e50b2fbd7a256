# The chunked CUDA kernel test (plain main, no GTest): shared by
# tests/gpu/CMakeLists.txt and gpu/standalone/. Without a GPU it prints one line and passes.
if(TARGET vla_chunked)
  add_executable(test_gpu_chunked_cuda ${CMAKE_CURRENT_LIST_DIR}/test_chunked_cuda.cpp)
  target_include_directories(test_gpu_chunked_cuda PRIVATE ${CMAKE_CURRENT_LIST_DIR} ${CMAKE_CURRENT_LIST_DIR}/../../reference/include)
  target_link_libraries(test_gpu_chunked_cuda PRIVATE vla_chunked vla_twin vla_error_model)
  add_test(NAME gpu_chunked_cuda_kernels COMMAND test_gpu_chunked_cuda)
endif()
