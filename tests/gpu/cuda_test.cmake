# The CUDA kernel test (plain main, no GTest): shared by tests/gpu/CMakeLists.txt
# and gpu/standalone/. Without a GPU it prints one line and passes.
add_executable(test_gpu_cuda ${CMAKE_CURRENT_LIST_DIR}/test_cuda.cpp)
target_include_directories(test_gpu_cuda PRIVATE ${CMAKE_CURRENT_LIST_DIR} ${CMAKE_CURRENT_LIST_DIR}/../../reference/include)
target_link_libraries(test_gpu_cuda PRIVATE vla_twin vla_error_model)
add_test(NAME gpu_cuda_kernels COMMAND test_gpu_cuda)
