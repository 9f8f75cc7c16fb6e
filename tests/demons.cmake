# Field operations and the diffeomorphic demons (CPU reference). Owner: demons.
nw_add_test(test_field SOURCES test_field.c LABELS unit demons)
nw_add_test(test_field_affine SOURCES test_field_affine.c LABELS unit demons)
nw_add_test(test_demons SOURCES test_demons.c LABELS accuracy demons)
nw_add_test(test_demons_masks SOURCES test_demons_masks.c LABELS unit demons)
# `neurowarp-cli demons` end to end, outputs read back with nibabel.
if(NW_PYTHON3)
  add_test(NAME cli_demons_test
           COMMAND ${NW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli_demons_test.py
                   $<TARGET_FILE:neurowarp-cli>)
  set_tests_properties(cli_demons_test PROPERTIES SKIP_RETURN_CODE 77 LABELS "cli;demons" TIMEOUT 300)
endif()
