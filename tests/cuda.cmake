# CUDA back end tests (owner: cuda). test_cuda_smooth needs a device (skips with 77 without
# one); test_cuda_no_device runs in every build, with or without CUDA.
nw_add_test(test_cuda_no_device SOURCES test_cuda_smooth.c LABELS cuda)
target_compile_definitions(test_cuda_no_device PRIVATE NW_TEST_NO_DEVICE_ONLY=1)
if(NW_HAVE_CUDA)
  target_compile_definitions(test_cuda_no_device PRIVATE NW_HAVE_CUDA=1)
  nw_add_test(test_cuda_smooth SOURCES test_cuda_smooth.c CUDA)
  target_compile_definitions(test_cuda_smooth PRIVATE NW_HAVE_CUDA=1)
endif()
# Kernel-level parity (llm.c's validate_result): every kernel of cuda/ against its CPU twin,
# through one small validate helper (cuda_validate.c). Skipped without a CUDA device; the GPU
# host runs them under compute-sanitizer (label cuda). Small grids: seconds on a GPU.
if(NW_HAVE_CUDA)
  add_library(nw_cuda_validate STATIC cuda_validate.c cuda_validate_demons.cu)
  target_include_directories(nw_cuda_validate PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(nw_cuda_validate PUBLIC nw_cuda nw_methods_cpu CUDA::cudart)
  foreach(area field gauss demons)
    nw_add_test(test_cuda_${area}_kernels SOURCES test_cuda_${area}_kernels.cu
                LIBS nw_cuda_validate nw_cuda CUDA LABELS kernels)
  endforeach()
endif()
# The CUDA affine cost against the CPU cost, and CUDA "affine" runs against CPU ones (issue 11;
# skipped without a CUDA device).
if(NW_HAVE_CUDA)
  nw_add_test(test_cuda_affine_cost SOURCES test_cuda_affine_cost.c
              LIBS nw_affine_testutil nw_cuda CUDA LABELS affine)
  target_compile_definitions(test_cuda_affine_cost PRIVATE NW_HAVE_CUDA=1)
endif()
# Pinned host blocks and device blocks kept from one job to the next
# (cuda/kept_blocks_cuda.cuh); skipped without a CUDA device.
if(NW_HAVE_CUDA)
  nw_add_test(test_cuda_kept_blocks SOURCES test_cuda_kept_blocks.cu LIBS nw_cuda CUDA
              LABELS unit)
endif()
# The host half of the affine cost's rows variants (cuda/affine_cost_rows_cuda.cuh): the walk
# over groups of voxels and the choice of a form. Needs nvcc, not a device: runs in every
# CUDA build.
if(NW_HAVE_CUDA)
  nw_add_test(test_affine_rows_walk SOURCES test_affine_rows_walk.cu LIBS nw_cuda
              LABELS unit affine)
endif()
