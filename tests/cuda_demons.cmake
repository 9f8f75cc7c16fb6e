# CUDA demons against the CPU reference (skipped without a CUDA device).
if(NW_HAVE_CUDA)
  nw_add_test(test_cuda_demons SOURCES test_cuda_demons.c CUDA LABELS cuda)
endif()
