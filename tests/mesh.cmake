# mesh: the surface type, mesh files (GIFTI, FreeSurfer, VTK, PLY, OBJ) and the CPU
# reference marching cubes (core/surface.c, core/io_mesh.c, core/marching_cubes.c). CPU only;
# each test runs in well under a second (the ch2bet case skips when mricron-data is absent).
nw_add_test(test_surface SOURCES test_surface.c LABELS mesh)
nw_add_test(test_io_mesh SOURCES test_io_mesh.c LABELS mesh io)
nw_add_test(test_marching_cubes SOURCES test_marching_cubes.c LABELS mesh)
# The independent reader/writer for the GIFTI and FreeSurfer conventions: nibabel.
target_compile_definitions(test_io_mesh PRIVATE NW_PYTHON3="${NW_PYTHON3}")
