# CUDA "fluid" (issue 14) against the CPU reference: every kernel of cuda/fluid_kernels.cu
# against its CPU twin (and the two force variants against each other), and the whole method
# through the method interface. Skipped without a CUDA device; the GPU host runs the cuda
# label under compute-sanitizer.
if(NW_HAVE_CUDA)
  nw_add_test(test_cuda_fluid_kernels SOURCES test_cuda_fluid_kernels.cu
              LIBS nw_cuda_validate nw_cuda CUDA LABELS kernels fluid)
  nw_add_test(test_cuda_fluid SOURCES test_cuda_fluid.c fluid_testutil.c CUDA LABELS cuda fluid)
endif()
