# neurowarp-cli demons end to end, read back by elastix's transformix (skips without it).
if(NW_PYTHON3)
  add_test(NAME demons_transformix
    COMMAND ${NW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/demons_transformix_check.py
            $<TARGET_FILE:neurowarp-cli>)
  set_tests_properties(demons_transformix PROPERTIES SKIP_RETURN_CODE 77 LABELS "cli;demons")
endif()
# `neurowarp-cli demons --outputs` and the time split of its summary (issue 12).
if(NW_PYTHON3)
  add_test(NAME demons_outputs
    COMMAND ${NW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/demons_outputs_test.py
            $<TARGET_FILE:neurowarp-cli>)
  set_tests_properties(demons_outputs PROPERTIES SKIP_RETURN_CODE 77 LABELS "cli;demons" TIMEOUT 300)
endif()
# `neurowarp-cli demons --fixed-mask / --moving-mask` (issue 12).
if(NW_PYTHON3)
  add_test(NAME demons_masks
    COMMAND ${NW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/demons_masks_test.py
            $<TARGET_FILE:neurowarp-cli>)
  set_tests_properties(demons_masks PROPERTIES SKIP_RETURN_CODE 77 LABELS "cli;demons" TIMEOUT 300)
endif()
