# nlm-surface: level-set non-local-means surface denoising, CPU reference (issue 13):
# fast-sweeping re-initialisation, mesh -> signed distance, the kernels (exact top-m), the
# accuracy on phantoms the tests make, and the CLI end to end. CPU only; the accuracy test
# takes ~10-20 s on a 2-core machine (O(N^2 P) with N ~ 4000-5500), the others ~1 s.
nw_add_test(test_sdf_reinit SOURCES test_sdf_reinit.c LABELS unit nlm)
nw_add_test(test_mesh_sdf SOURCES test_mesh_sdf.c LABELS unit nlm mesh)
nw_add_test(test_nlm_kernels SOURCES test_nlm_kernels.c nlm_testutil.c LABELS unit nlm)
nw_add_test(test_nlm_accuracy SOURCES test_nlm_accuracy.c nlm_testutil.c LABELS accuracy nlm)
set_tests_properties(test_nlm_accuracy PROPERTIES TIMEOUT 300)
if(NW_PYTHON3)
  add_test(NAME denoise_surface_cli
           COMMAND ${NW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/denoise_surface_cli_test.py
                   $<TARGET_FILE:neurowarp-cli>)
  set_tests_properties(denoise_surface_cli PROPERTIES SKIP_RETURN_CODE 77 LABELS "cli;nlm"
                       TIMEOUT 300)
endif()
