/* fluid_testutil.h — the phantom that test_fluid.c and test_cuda_fluid.c register: a textured
 * ellipsoid with a darker core in a cube of NW_FLUID_TEST_N voxels. */
#ifndef NW_FLUID_TESTUTIL_H
#define NW_FLUID_TESTUTIL_H

#define NW_FLUID_TEST_N 32

/* The ellipsoid "radius" of (x, y, z) about the centre, semi-axes scaled by `size`: below 1
 * inside the phantom's body. */
double nw_fluid_test_blob_r(double x, double y, double z, double size);
/* The phantom of size `size` (the one of size 1 scaled about the centre, texture included)
 * at voxel position (x, y, z): smooth edges, intensities about 10..150. */
double nw_fluid_test_phantom_at(double x, double y, double z, double size);

#endif
