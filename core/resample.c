/* resample.c — trilinear / nearest sampling with clamp-to-border, warping by a voxel-unit
 * displacement field, pyramid downsampling and resizing. CPU reference for the CUDA twins.
 * Any thread; OpenMP over the voxels of the whole-volume functions.
 *
 * Coordinates are continuous voxel indices (voxel centres at integers). Clamp: a coordinate
 * below 0 or above n-1 is moved onto the border before interpolating, so outside samples take
 * the nearest border value. Interpolation weights are float, as on the GPU. */
#include "resample.h"

#include <math.h>
#include <string.h>

#include "nw_error.h"
#include "smooth.h"

/* Clamp x to [0, n-1], then split it into a base index i0 (with i0 + 1 clamped to n-1 as
 * i1) and the fraction f in [0, 1]. */
static inline void clamp_split(double x, int n, int *i0, int *i1, float *f)
{
  double hi = (double)(n - 1);
  x = x < 0.0 ? 0.0 : (x > hi ? hi : x);
  int i = (int)floor(x);
  *i0 = i;
  *i1 = i + 1 < n ? i + 1 : n - 1;
  *f = (float)(x - (double)i);
}

/* All nc components of the trilinear sample at (x, y, z) into out[0..nc-1]. */
static void sample_trilinear_all(const NwVolume *v, double x, double y, double z, float *out)
{
  if (isnan(x) || isnan(y) || isnan(z)) {
    for (int c = 0; c < v->nc; c++)
      out[c] = NAN;
    return;
  }
  int x0, x1, y0, y1, z0, z1;
  float fx, fy, fz;
  clamp_split(x, v->nx, &x0, &x1, &fx);
  clamp_split(y, v->ny, &y0, &y1, &fy);
  clamp_split(z, v->nz, &z0, &z1, &fz);
  const int nc = v->nc;
  const float *d = v->data;
  size_t i000 = nw_volume_index(v, x0, y0, z0) * nc, i100 = nw_volume_index(v, x1, y0, z0) * nc;
  size_t i010 = nw_volume_index(v, x0, y1, z0) * nc, i110 = nw_volume_index(v, x1, y1, z0) * nc;
  size_t i001 = nw_volume_index(v, x0, y0, z1) * nc, i101 = nw_volume_index(v, x1, y0, z1) * nc;
  size_t i011 = nw_volume_index(v, x0, y1, z1) * nc, i111 = nw_volume_index(v, x1, y1, z1) * nc;
  for (int c = 0; c < nc; c++) {
    /* Interpolate along x, then y, then z: the order the CUDA twin uses. */
    float c00 = d[i000 + c] + fx * (d[i100 + c] - d[i000 + c]);
    float c10 = d[i010 + c] + fx * (d[i110 + c] - d[i010 + c]);
    float c01 = d[i001 + c] + fx * (d[i101 + c] - d[i001 + c]);
    float c11 = d[i011 + c] + fx * (d[i111 + c] - d[i011 + c]);
    float c0 = c00 + fy * (c10 - c00);
    float c1 = c01 + fy * (c11 - c01);
    out[c] = c0 + fz * (c1 - c0);
  }
}

static inline int nearest_index(double x, int n)
{
  double r = floor(x + 0.5); /* halves round up */
  return r < 0.0 ? 0 : (r > (double)(n - 1) ? n - 1 : (int)r);
}

static void sample_nearest_all(const NwVolume *v, double x, double y, double z, float *out)
{
  if (isnan(x) || isnan(y) || isnan(z)) {
    for (int c = 0; c < v->nc; c++)
      out[c] = NAN;
    return;
  }
  size_t e = nw_volume_index(v, nearest_index(x, v->nx), nearest_index(y, v->ny),
                             nearest_index(z, v->nz)) *
             (size_t)v->nc;
  memcpy(out, v->data + e, (size_t)v->nc * sizeof(float));
}

float nw_sample_trilinear(const NwVolume *v, int c, double x, double y, double z)
{
  g_return_val_if_fail(c >= 0 && c < v->nc, NAN);
  float buf[16], *out = v->nc <= 16 ? buf : g_new(float, v->nc);
  sample_trilinear_all(v, x, y, z, out);
  float r = out[c];
  if (out != buf)
    g_free(out);
  return r;
}

float nw_sample_nearest(const NwVolume *v, int c, double x, double y, double z)
{
  g_return_val_if_fail(c >= 0 && c < v->nc, NAN);
  if (isnan(x) || isnan(y) || isnan(z))
    return NAN;
  size_t e =
      nw_volume_index(v, nearest_index(x, v->nx), nearest_index(y, v->ny), nearest_index(z, v->nz));
  return v->data[e * (size_t)v->nc + (size_t)c];
}

void nw_warp(NwVolume *out, const NwVolume *in, const NwVolume *u, NwInterp interp)
{
  g_return_if_fail(out->nc == in->nc && u->nc == 3);
  g_return_if_fail(u->nx == out->nx && u->ny == out->ny && u->nz == out->nz);
  const size_t n = nw_volume_n_voxels(out);
  const int nc = out->nc;
#pragma omp parallel for schedule(static)
  for (gint64 e = 0; e < (gint64)n; e++) {
    int i = (int)(e % out->nx), j = (int)((e / out->nx) % out->ny);
    int k = (int)(e / ((gint64)out->nx * out->ny));
    const float *d = u->data + (size_t)e * 3;
    double x = i + (double)d[0], y = j + (double)d[1], z = k + (double)d[2];
    float *o = out->data + (size_t)e * nc;
    if (interp == NW_INTERP_NEAREST)
      sample_nearest_all(in, x, y, z, o);
    else
      sample_trilinear_all(in, x, y, z, o);
  }
}

/* The output grid: out voxel index o maps to in voxel index o * scale[c] + offset[c] per axis.
 * The affine composes the same map so that every out voxel keeps the world position of the
 * point it was sampled from. */
static void compose_affine(NwVolume *out, const NwVolume *in, const double scale[3],
                           const double offset[3])
{
  double a[16];
  const double *b = in->vox_to_ras;
  for (int r = 0; r < 4; r++) {
    for (int c = 0; c < 3; c++)
      a[r * 4 + c] = b[r * 4 + c] * scale[c];
    a[r * 4 + 3] = b[r * 4 + 3];
    for (int c = 0; c < 3; c++)
      a[r * 4 + 3] += b[r * 4 + c] * offset[c];
  }
  nw_volume_set_affine(out, a);
}

/* out(o) = trilinear in(o * scale + offset), every component. */
static void resample_grid(NwVolume *out, const NwVolume *in, const double scale[3],
                          const double offset[3])
{
  const size_t n = nw_volume_n_voxels(out);
#pragma omp parallel for schedule(static)
  for (gint64 e = 0; e < (gint64)n; e++) {
    int i = (int)(e % out->nx), j = (int)((e / out->nx) % out->ny);
    int k = (int)(e / ((gint64)out->nx * out->ny));
    sample_trilinear_all(in, i * scale[0] + offset[0], j * scale[1] + offset[1],
                         k * scale[2] + offset[2], out->data + (size_t)e * out->nc);
  }
}

/* nw_downsample2's map per axis: the Gaussian's sigma (voxels) and out index o -> in index
 * o * scale + offset. A coarse voxel o covers fine voxels 2o and 2o+1: its centre is at fine
 * index 2o + 0.5; an axis of one voxel stays. */
static void downsample2_map(const NwVolume *in, int n_out[3], double sigma[3], double scale[3],
                            double offset[3])
{
  const int n_in[3] = {in->nx, in->ny, in->nz};
  for (int a = 0; a < 3; a++) {
    const gboolean shrink = n_in[a] > 1;
    n_out[a] = shrink ? (n_in[a] + 1) / 2 : 1;
    sigma[a] = shrink ? 1.0 : 0.0;
    scale[a] = shrink ? 2.0 : 1.0;
    offset[a] = shrink ? 0.5 : 0.0;
  }
}

void nw_downsample2_header(const NwVolume *in, NwVolume *out)
{
  int n_out[3];
  double sigma[3], scale[3], offset[3];
  downsample2_map(in, n_out, sigma, scale, offset);
  *out = (NwVolume){.nx = n_out[0], .ny = n_out[1], .nz = n_out[2], .nc = in->nc, .data = NULL};
  compose_affine(out, in, scale, offset);
}

NwVolume *nw_downsample2_new(const NwVolume *in, GError **error)
{
  NwVolume grid;
  nw_downsample2_header(in, &grid);
  return nw_volume_new_like(&grid, grid.nc, error);
}

NwVolume *nw_downsample2(const NwVolume *in, GError **error)
{
  int n_out[3];
  double sigma[3], scale[3], offset[3];
  downsample2_map(in, n_out, sigma, scale, offset);
  g_autoptr(NwVolume) smooth = nw_volume_copy(in);
  if (!nw_smooth_gaussian(smooth, sigma, error))
    return NULL;
  NwVolume *out = nw_downsample2_new(in, error);
  if (out == NULL)
    return NULL;
  resample_grid(out, smooth, scale, offset);
  return out;
}

NwVolume *nw_resize(const NwVolume *in, int nx, int ny, int nz, gboolean is_voxel_field,
                    GError **error)
{
  if (is_voxel_field && in->nc != 3) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "cannot resize a voxel-unit vector field with %d components: it needs 3", in->nc);
    return NULL;
  }
  NwVolume *out = nw_volume_new(nx, ny, nz, in->nc, error);
  if (out == NULL)
    return NULL;
  /* Same world box: the outer faces of the first and last voxels (index -0.5 and n-0.5)
   * coincide, so in index = (o + 0.5) * n_in / n_out - 0.5. */
  const int n_in[3] = {in->nx, in->ny, in->nz}, n_out[3] = {nx, ny, nz};
  double scale[3], offset[3];
  for (int a = 0; a < 3; a++) {
    scale[a] = (double)n_in[a] / (double)n_out[a];
    offset[a] = 0.5 * scale[a] - 0.5;
  }
  compose_affine(out, in, scale, offset);
  resample_grid(out, in, scale, offset);
  if (is_voxel_field) {
    /* A displacement of d in-voxels along axis a is d * n_out/n_in out-voxels. */
    float ratio[3];
    for (int a = 0; a < 3; a++)
      ratio[a] = (float)((double)n_out[a] / (double)n_in[a]);
    const size_t n = nw_volume_n_voxels(out);
#pragma omp parallel for schedule(static)
    for (gint64 e = 0; e < (gint64)n; e++)
      for (int a = 0; a < 3; a++)
        out->data[(size_t)e * 3 + a] *= ratio[a];
  }
  return out;
}
