/* sampler.h — point samples of a scalar image at continuous voxel positions, with the three
 * interpolators of affine registration and resampling, and the domain test that decides
 * which points count. CPU reference of the GPU cost kernel's sampling. Any thread.
 *
 * Domain: a position is inside when every coordinate lies in [-0.5, n - 0.5] (the image's
 * voxels as boxes, as ITK counts them); there, neighbours beyond the border take the border
 * voxel's value. Images with one slice (nz = 1) are sampled in 2D (z only tested).
 *
 * Kernels:
 *   nearest  the voxel floor(x + 0.5) (halves round up)
 *   linear   bilinear / trilinear
 *   cubic    Keys cubic convolution with a = -0.5 (Catmull-Rom; interpolating, exact for
 *            quadratics), 4 taps per axis: 16 in 2D, 64 in 3D. It may overshoot the
 *            neighbours' range near edges, as every interpolating cubic does. */
#ifndef NW_SAMPLER_H
#define NW_SAMPLER_H

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

typedef enum {
  NW_SAMPLER_NEAREST,
  NW_SAMPLER_LINEAR,
  NW_SAMPLER_CUBIC,
} NwSampler;

/* "nearest", "linear", "cubic"; parse is case-insensitive and names the choices on error. */
const char *nw_sampler_name(NwSampler s);
gboolean nw_sampler_parse(const char *text, NwSampler *out, GError **error);

/* Keys' kernel (a = -0.5) at distance d from a tap. */
double nw_keys_kernel(double d);

/* Component 0 of v at voxel position (x, y, z): FALSE (and *out untouched) outside the
 * domain or at a NaN position. */
gboolean nw_sampler_sample(const NwVolume *v, NwSampler s, double x, double y, double z,
                           float *out);

/* A window of a scalar image: voxels [lo, lo + n) of a grid of full[3] voxels, x fastest
 * (n[0] floats a row). */
typedef struct {
  const float *data;
  int lo[3], n[3], full[3];
} NwSampleWindow;

/* nw_sampler_sample of the full image at (x, y, z), read from the window: the same value bit
 * for bit when the window holds every tap (nearest: the voxel floor(p + 0.5); linear: floor(p)
 * and floor(p) + 1; cubic: floor(p) - 1 .. floor(p) + 2, each clamped to the full grid). */
gboolean nw_sampler_sample_window(const NwSampleWindow *w, NwSampler s, double x, double y,
                                  double z, float *out);

G_END_DECLS

#endif
