# neurowarp-cli and the demo case (app/cli*.c, core/demo.c). Owner: cli.
nw_add_test(test_demo SOURCES test_demo.c LABELS unit demo)
if(NW_PYTHON3)
  add_test(NAME cli_test
           COMMAND ${NW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli_test.py
                   $<TARGET_FILE:neurowarp-cli>)
  set_tests_properties(cli_test PROPERTIES SKIP_RETURN_CODE 77 LABELS "cli" TIMEOUT 300)
endif()
# The JSON writers (app/json_out.c) and the error mapping of app/cli_common.c.
nw_add_test(test_cli_json SOURCES test_cli_json.c ${PROJECT_SOURCE_DIR}/app/cli_common.c
            LIBS nw_json LABELS unit cli)
