# Distributed mutual information (issue 16, core/dmi_*.c): the loopback transport's simulated
# ranks against the single-process metric, the decomposition and its messages.
nw_add_test(test_dmi SOURCES test_dmi.c LIBS nw_affine_testutil LABELS unit affine distributed)
# Images read block by block (core/io_tiles.c): NIfTI rows, TIFF strips and tiles, BigTIFF.
nw_add_test(test_io_tiles SOURCES test_io_tiles.c LIBS TIFF::TIFF LABELS unit io distributed)
