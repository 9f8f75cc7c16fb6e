/* smooth.h — separable Gaussian smoothing on the CPU, and the kernel weights that the CUDA
 * implementation uses too (computed once on the host, so both back ends apply the same
 * numbers). Borders: clamp to the nearest voxel (replicate). Any thread; OpenMP inside. */
#ifndef NW_SMOOTH_H
#define NW_SMOOTH_H

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

/* Largest kernel radius we build: 3 sigma, capped, so a GPU block can hold its halo. */
#define NW_GAUSS_MAX_RADIUS 32

typedef struct {
  int radius;                           /* taps -radius..radius; 0 = identity */
  float w[2 * NW_GAUSS_MAX_RADIUS + 1]; /* normalised to sum 1 */
} NwGaussKernel;

/* Sampled Gaussian with radius ceil(3 sigma) (capped at NW_GAUSS_MAX_RADIUS), normalised.
 * sigma in voxels; sigma <= 0 gives the identity kernel. */
void nw_gauss_kernel(NwGaussKernel *k, double sigma_vox);

/* In place, every component, along each axis with sigma_vox[axis] (0 skips that axis).
 * Axes of size 1 are skipped. Passes run x, then y, then z; each output is the float sum
 * acc += w[t + r] * in[clamp(p + t)] over t = -r..r in ascending order (smooth.c says more):
 * the CUDA twin must match within 1e-5. NW_ERROR_INVALID for a negative or NaN sigma. */
gboolean nw_smooth_gaussian(NwVolume *v, const double sigma_vox[3], GError **error);
/* sigma given in mm: converted per axis with the volume's spacing (sigma_mm / spacing_mm). */
gboolean nw_smooth_gaussian_mm(NwVolume *v, double sigma_mm, GError **error);
/* That conversion alone (both back ends use it): NW_ERROR_INVALID for a negative or NaN
 * sigma or a spacing that is not positive and finite. */
gboolean nw_smooth_sigma_voxels(const NwVolume *v, double sigma_mm, double sigma_vox[3],
                                GError **error);

G_END_DECLS

#endif
