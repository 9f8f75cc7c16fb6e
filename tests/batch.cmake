# `neurowarp-cli batch LIST.csv` (issue 16): resume after a kill or Ctrl-C, failed rows, the
# chain affine,demons, --jobs, and with an MPI build the same batch under mpirun (2 and 4
# ranks on this machine, --oversubscribe).
if(NW_PYTHON3)
  add_test(NAME batch_cli
    COMMAND ${NW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/batch_cli_test.py
            $<TARGET_FILE:neurowarp-cli>)
  set_tests_properties(batch_cli PROPERTIES SKIP_RETURN_CODE 77 LABELS "cli;batch" TIMEOUT 300)
  if(NW_HAVE_MPI AND MPIEXEC_EXECUTABLE)
    add_test(NAME batch_cli_mpi
      COMMAND ${NW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/batch_cli_test.py
              $<TARGET_FILE:neurowarp-cli> ${MPIEXEC_EXECUTABLE})
    set_tests_properties(batch_cli_mpi PROPERTIES SKIP_RETURN_CODE 77 LABELS "cli;batch;mpi"
                         TIMEOUT 300)
    if(NW_SANITIZE)
      # Open MPI keeps allocations of its own past MPI_Finalize (ompi_op_base_op_select and
      # its dlopened components, whose frames LeakSanitizer shows past the end of
      # neurowarp-cli's image): not ours. batch_cli runs the same batch code without MPI with
      # leak detection on.
      set_property(TEST batch_cli_mpi APPEND PROPERTY ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
    endif()
  endif()
endif()
