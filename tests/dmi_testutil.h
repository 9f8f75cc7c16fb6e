/* dmi_testutil.h — what test_dmi.c and test_cuda_dmi.c share: the circular mask, the rotation
 * sweep (0, 15, ..., 180 degrees about the fixed image's centre, in 3D half as much about x,
 * plus a small shift) and the intensity ranges every rank must know. */
#ifndef NW_DMI_TESTUTIL_H
#define NW_DMI_TESTUTIL_H

#include "volume.h"

#define NW_DMI_TEST_ANGLES 13

/* A disc of radius r voxels about the grid's middle (1 inside, 0 outside), each slice. */
NwVolume *nw_dmi_test_disc_mask(const NwVolume *like, double r);
/* The sweep's RAS matrix at step a (a * 15 degrees). */
void nw_dmi_test_sweep_matrix(const NwVolume *fixed, int dim, int a, double m[16]);
/* The sweep's voxel maps, fixed voxel to moving voxel, one per step. */
void nw_dmi_test_sweep_maps(const NwVolume *fixed, const NwVolume *moving, int dim,
                            double maps[NW_DMI_TEST_ANGLES][12]);
/* Fixed lo, hi, moving lo, hi as nw_affine_cost_set_level takes them (masks may be NULL). */
void nw_dmi_test_ranges(const NwVolume *fixed, const NwVolume *fmask, const NwVolume *moving,
                        const NwVolume *mmask, double ranges[4]);

#endif
