# Unbiased viscous-fluid registration (CPU reference; issue 14). Owner: fluid.
nw_add_test(test_fluid SOURCES test_fluid.c fluid_testutil.c LABELS accuracy fluid)
# `neurowarp-cli fluid` end to end, outputs read back with nibabel.
if(NW_PYTHON3)
  add_test(NAME fluid_cli
    COMMAND ${NW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/fluid_cli_test.py
            $<TARGET_FILE:neurowarp-cli>)
  set_tests_properties(fluid_cli PROPERTIES SKIP_RETURN_CODE 77 LABELS "cli;fluid" TIMEOUT 300)
endif()
