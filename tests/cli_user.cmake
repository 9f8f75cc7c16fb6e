# What a user reads from neurowarp-cli (issue 15): usage in the user's locale, info on
# neurowarp's own files, the report at the end of a run.
if(NW_PYTHON3)
  add_test(NAME cli_user_test
           COMMAND ${NW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli_user_test.py
                   $<TARGET_FILE:neurowarp-cli>)
  set_tests_properties(cli_user_test PROPERTIES SKIP_RETURN_CODE 77 LABELS "cli" TIMEOUT 300)
endif()
nw_add_test(test_cli_info_mesh SOURCES test_cli_info_mesh.c LABELS cli)
target_compile_definitions(test_cli_info_mesh PRIVATE
                           NW_CLI_BINARY="$<TARGET_FILE:neurowarp-cli>")
add_dependencies(test_cli_info_mesh neurowarp-cli)
