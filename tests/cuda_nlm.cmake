# nlm-surface on CUDA against its CPU reference (issue 13): the fused distance + top-m kernel
# (random, sphere band, ties, odd shapes, a 30000-row band sampled), the patch matrix, weights,
# step and update, and the whole method on the noisy sphere. Skipped without a CUDA device;
# labelled cuda, so the GPU host also runs it under compute-sanitizer. ~20-40 s on the GPU host
# (the CPU references dominate).
if(NW_HAVE_CUDA)
  nw_add_test(test_cuda_nlm SOURCES test_cuda_nlm.c nlm_testutil.c LIBS nw_cuda CUDA LABELS nlm)
  set_tests_properties(test_cuda_nlm PROPERTIES TIMEOUT 300)
endif()
