# Distributed mutual information (issue 16, core/dmi_*.c): the loopback transport's simulated
# ranks against the single-process metric, the decomposition and its messages.
nw_add_test(test_dmi SOURCES test_dmi.c dmi_testutil.c LIBS nw_affine_testutil LABELS unit affine distributed)
# The replicated strategy's resident moving window (core/dmi_window.c): needed boxes, reuse,
# shift and fetch, the toroidal copies replayed on the host, the budget under the cap.
nw_add_test(test_dmi_window SOURCES test_dmi_window.c LIBS nw_dmi LABELS unit distributed)
# Images read block by block (core/io_tiles.c): NIfTI rows, TIFF strips and tiles, BigTIFF.
nw_add_test(test_io_tiles SOURCES test_io_tiles.c LIBS TIFF::TIFF LABELS unit io distributed)
# neurowarp-cli affine --distributed: one rank cut into blocks and the messages
# (affine_dist_cli), and with an MPI build 2 and 4 ranks of mpirun on this machine
# (affine_dist_cli_mpi, --oversubscribe): the single-process MI run's transform either way.
if(NW_PYTHON3)
  add_test(NAME affine_dist_cli
    COMMAND ${NW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/affine_dist_cli_test.py
            $<TARGET_FILE:neurowarp-cli>)
  set_tests_properties(affine_dist_cli PROPERTIES SKIP_RETURN_CODE 77
                       LABELS "cli;affine;distributed" TIMEOUT 300)
  if(NW_HAVE_MPI AND MPIEXEC_EXECUTABLE)
    add_test(NAME affine_dist_cli_mpi
      COMMAND ${NW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/affine_dist_cli_test.py
              $<TARGET_FILE:neurowarp-cli> ${MPIEXEC_EXECUTABLE})
    set_tests_properties(affine_dist_cli_mpi PROPERTIES SKIP_RETURN_CODE 77
                         LABELS "cli;affine;distributed;mpi" TIMEOUT 600)
    # 2 ranks sharing the GPU (--device cuda); skipped without one
    if(NW_HAVE_CUDA)
      add_test(NAME affine_dist_cli_mpi_cuda
        COMMAND ${NW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/affine_dist_cli_test.py
                $<TARGET_FILE:neurowarp-cli> ${MPIEXEC_EXECUTABLE} cuda)
      set_tests_properties(affine_dist_cli_mpi_cuda PROPERTIES SKIP_RETURN_CODE 77
                           LABELS "cli;affine;distributed;mpi;gpu" TIMEOUT 300)
    endif()
    if(NW_SANITIZE)
      # Open MPI keeps allocations past MPI_Finalize (see batch.cmake): not ours;
      # affine_dist_cli runs the same code on one rank with leak detection on.
      set_property(TEST affine_dist_cli_mpi APPEND PROPERTY ENVIRONMENT
                   "ASAN_OPTIONS=detect_leaks=0")
      if(TEST affine_dist_cli_mpi_cuda) # and ASan's shadow gap clashes with the CUDA driver
        set_property(TEST affine_dist_cli_mpi_cuda APPEND PROPERTY ENVIRONMENT
                     "ASAN_OPTIONS=detect_leaks=0:protect_shadow_gap=0")
      endif()
    endif()
  endif()
endif()
# The CUDA twin of the local histograms (cuda/dmi_cuda.cu) against the CPU's, count for count,
# simulated ranks sharing the GPU (skips without one).
if(NW_HAVE_CUDA)
  nw_add_test(test_cuda_dmi SOURCES test_cuda_dmi.c dmi_testutil.c LIBS nw_cuda CUDA LABELS distributed)
  target_compile_definitions(test_cuda_dmi PRIVATE NW_HAVE_CUDA=1)
endif()
