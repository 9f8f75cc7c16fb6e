# Affine registration (core/affine_*.c, core/sampler.c, core/cpu/affine_*.c). Owner: affine.
nw_add_test(test_affine_transform SOURCES test_affine_transform.c LABELS unit affine)
add_library(nw_affine_testutil STATIC affine_testutil.c)
target_link_libraries(nw_affine_testutil PUBLIC nw_testutil)
nw_add_test(test_affine_cost SOURCES test_affine_cost.c LIBS nw_affine_testutil
            LABELS unit affine)
nw_add_test(test_affine_accuracy SOURCES test_affine_accuracy.c LIBS nw_affine_testutil
            LABELS accuracy affine)
set_tests_properties(test_affine_accuracy PROPERTIES TIMEOUT 600)
nw_add_test(test_transform_io SOURCES test_transform_io.c LABELS unit affine io)
if(NW_SANITIZE)
  # Unoptimised and instrumented, the 3D cases would take many minutes: there they run a
  # few simplex iterations for the memory checks, and the optimised build checks accuracy.
  set_property(TEST test_affine_accuracy APPEND PROPERTY ENVIRONMENT NW_AFFINE_QUICK=1)
endif()
# neurowarp-cli affine and resample, transform files read and written by SimpleITK (in the
# .venv scripts/install-deps.sh makes; without it the test says so and is skipped).
set(NW_AFFINE_PYTHON ${PROJECT_SOURCE_DIR}/.venv/bin/python3)
if(NOT EXISTS ${NW_AFFINE_PYTHON})
  set(NW_AFFINE_PYTHON ${NW_PYTHON3})
endif()
if(NW_AFFINE_PYTHON)
  add_test(NAME affine_cli_test
           COMMAND ${NW_AFFINE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/affine_cli_test.py
                   $<TARGET_FILE:neurowarp-cli>)
  set_tests_properties(affine_cli_test PROPERTIES SKIP_RETURN_CODE 77 LABELS "cli;affine"
                       TIMEOUT 600)
endif()
