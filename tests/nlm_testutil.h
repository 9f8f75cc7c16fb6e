/* nlm_testutil.h — phantoms and measures for the nlm-surface tests: a sphere with normal
 * noise, spurious blobs and holes; two touching boxes; the mean distance between two zero
 * level sets; running the method through its table. Level sets in mm, negative inside. */
#ifndef NW_NLM_TESTUTIL_H
#define NW_NLM_TESTUTIL_H

#include <glib.h>

#include "method.h"
#include "volume.h"

G_BEGIN_DECLS

/* The clean sphere's exact signed distance on an n^3 grid of 1 mm voxels, radius r mm,
 * centred at (n - 1) / 2 plus a small offset (so the surface is not symmetric about voxel
 * centres). */
NwVolume *nlm_test_sphere(int n, double r);
/* Its noisy version: phi + N(0, noise_mm^2) per voxel, plus n_blobs balls of radius blob_mm
 * outside it (3 mm off the surface) and n_holes ball-shaped cavities inside (3 mm deep). */
NwVolume *nlm_test_noisy_sphere(const NwVolume *clean, double r, double noise_mm, int n_blobs,
                                int n_holes, double blob_mm, guint32 seed);
/* Two axis-aligned boxes that touch along part of a face (an L-shaped step), as a signed
 * distance re-initialised from their mask on an n^3 grid of 1 mm voxels (faces half-way
 * between voxel centres, where the reinitialised distance is exact along the axes). */
NwVolume *nlm_test_boxes(int n);
/* phi + N(0, noise_mm^2) per voxel. */
NwVolume *nlm_test_add_noise(const NwVolume *phi, double noise_mm, guint32 seed);

/* The symmetric mean distance (mm) between the zero level sets of a and clean: the mean of
 * |clean| at the vertices of a's zero-level-set mesh and of |a re-initialised| at the vertices
 * of clean's, averaged. */
double nlm_test_surface_distance(const NwVolume *a, const NwVolume *clean);

/* Run nlm-surface (CPU) on phi with p through its method table, on this thread; the result's
 * "sdf" (owned). *band: the band size of the first iteration. */
NwVolume *nlm_test_denoise(const NwVolume *phi, const NwParams *p, int *band);
/* The same through any back end's table (the CUDA twin's parity test); reports[it] (when not
 * NULL, room for every iteration) get each iteration's report. */
NwVolume *nlm_test_denoise_ops(const NwMethodOps *ops, const NwVolume *phi, const NwParams *p,
                               int *band, NwIterationReport *reports);

G_END_DECLS

#endif
