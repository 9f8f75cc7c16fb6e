/* interp_weights.h — the interpolation and Parzen-window weights, written once for the CPU
 * (core/) and the GPU (cuda/), so the twins cannot drift apart: in C they are plain static
 * inline functions, compiled by nvcc they are __host__ __device__ as well.
 *
 *   nw_keys_weight(d)     Keys' cubic convolution kernel, a = -0.5 (the samplers' "cubic")
 *   nw_bspline3_weight(d) the cubic B-spline (mutual information's Parzen window)
 *
 * d is the distance from a tap in voxels (or bins); both vanish for |d| >= 2. */
#ifndef NW_INTERP_WEIGHTS_H
#define NW_INTERP_WEIGHTS_H

#include <math.h>

#ifdef __CUDACC__
#define NW_HOST_DEVICE __host__ __device__
#else
#define NW_HOST_DEVICE
#endif

static inline NW_HOST_DEVICE double nw_keys_weight(double d)
{
  const double a = -0.5;
  d = fabs(d);
  if (d <= 1.0)
    return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
  if (d < 2.0)
    return ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
  return 0.0;
}

static inline NW_HOST_DEVICE double nw_bspline3_weight(double d)
{
  d = fabs(d);
  if (d < 1.0)
    return 2.0 / 3.0 - d * d + 0.5 * d * d * d;
  if (d < 2.0)
    return (2.0 - d) * (2.0 - d) * (2.0 - d) / 6.0;
  return 0.0;
}

#endif
