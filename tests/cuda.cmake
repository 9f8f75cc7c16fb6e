# CUDA back end tests (owner: cuda). test_cuda_smooth needs a device (skips with 77 without
# one); test_cuda_no_device runs in every build, with or without CUDA.
nw_add_test(test_cuda_no_device SOURCES test_cuda_smooth.c LABELS cuda)
target_compile_definitions(test_cuda_no_device PRIVATE NW_TEST_NO_DEVICE_ONLY=1)
if(NW_HAVE_CUDA)
  target_compile_definitions(test_cuda_no_device PRIVATE NW_HAVE_CUDA=1)
  nw_add_test(test_cuda_smooth SOURCES test_cuda_smooth.c CUDA)
  target_compile_definitions(test_cuda_smooth PRIVATE NW_HAVE_CUDA=1)
endif()
