# Writing method results as NIfTI files (core/result_io.h), as the CLI and the GUI save them.
nw_add_test(test_result_io SOURCES test_result_io.c LIBS nw_io LABELS unit io)
