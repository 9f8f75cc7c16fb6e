/* smooth.c — separable Gaussian smoothing on the CPU: the specification that the CUDA twin
 * (cuda/smooth_cuda.cu) is checked against within 1e-5. Any thread; OpenMP over lines.
 *
 * The arithmetic, exactly (a GPU kernel reproduces it by doing the same):
 *   - the kernel weights are computed once on the host (nw_gauss_kernel) and shared;
 *   - axes are processed in the order x, then y, then z; each pass reads the result of the
 *     previous one (the volume is updated in place between passes);
 *   - along an axis of length n, for each position p and component c:
 *         acc = 0.0f;
 *         for (t = -r; t <= r; t++)                       (ascending, fixed order)
 *           acc += w[t + r] * in[clamp(p + t, 0, n - 1)];  (float multiply, float add)
 *         out[p] = acc;
 *     the multiply and the add are rounded separately (ISO C11 mode turns GCC's contraction
 *     into FMA off), so a GPU twin using __fmul_rn/__fadd_rn matches bit for bit, and one
 *     that fuses them stays well inside 1e-5 with normalised weights;
 *   - axes of size 1 and axes whose sigma is 0 are skipped (identity).
 */
#include "smooth.h"

#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "nw_error.h"

/* Floats per group column block: in a y or z pass, the positions along the axis times this
 * many neighbouring x-row floats are buffered together, so reads stay contiguous. */
#define BLOCK_FLOATS 256

void nw_gauss_kernel(NwGaussKernel *k, double sigma_vox)
{
  memset(k, 0, sizeof *k);
  if (!(sigma_vox > 0.0)) { /* also catches NaN */
    k->radius = 0;
    k->w[0] = 1.0f;
    return;
  }
  double rr = ceil(3.0 * sigma_vox);
  int r = rr > NW_GAUSS_MAX_RADIUS ? NW_GAUSS_MAX_RADIUS : (int)rr;
  /* Weights in double, normalised in double, then rounded to float once. */
  double w[2 * NW_GAUSS_MAX_RADIUS + 1], sum = 0.0;
  for (int t = -r; t <= r; t++) {
    w[t + r] = exp(-(double)t * (double)t / (2.0 * sigma_vox * sigma_vox));
    sum += w[t + r];
  }
  k->radius = r;
  for (int t = 0; t <= 2 * r; t++)
    k->w[t] = (float)(w[t] / sum);
}

static inline int clamp_index(int q, int n)
{
  return q < 0 ? 0 : (q > n - 1 ? n - 1 : q);
}

/* One pass along an axis over a group of m <= BLOCK_FLOATS interleaved columns: element
 * (p, e) of the group lives at data[base + p * step + e], p in 0..n-1, e in 0..m-1. buf holds
 * n * m floats. Every element sums its taps t = -r..r in ascending order; for m > 1 the tap
 * loop is outside the column loop so that the inner loop runs over contiguous floats. */
static void convolve_group(float *data, size_t base, size_t step, int n, int m,
                           const NwGaussKernel *k, float *buf)
{
  for (int p = 0; p < n; p++)
    memcpy(buf + (size_t)p * m, data + base + (size_t)p * step, (size_t)m * sizeof(float));
  const int r = k->radius;
  const float *w = k->w + r; /* w[t], t = -r..r */
  if (m == 1) {              /* x pass of a scalar volume: one float per position */
    float *out = data + base;
    for (int p = 0; p < n; p++) {
      float acc = 0.0f;
      if (p >= r && p + r < n) {
        for (int t = -r; t <= r; t++)
          acc += w[t] * buf[p + t];
      } else {
        for (int t = -r; t <= r; t++)
          acc += w[t] * buf[clamp_index(p + t, n)];
      }
      out[(size_t)p * step] = acc;
    }
    return;
  }
  float acc[BLOCK_FLOATS];
  for (int p = 0; p < n; p++) {
    for (int e = 0; e < m; e++)
      acc[e] = 0.0f;
    for (int t = -r; t <= r; t++) {
      const float wt = w[t], *src = buf + (size_t)clamp_index(p + t, n) * m;
      for (int e = 0; e < m; e++)
        acc[e] += wt * src[e];
    }
    memcpy(data + base + (size_t)p * step, acc, (size_t)m * sizeof(float));
  }
}

/* The groups of one axis pass. x: each row (k, j) is a group of n = nx positions with m = nc
 * components. y and z: a group is a block of up to BLOCK_FLOATS consecutive floats of an
 * x-row, taken at every position along the axis (step = one row or one slice). Every axis
 * splits its m_full floats per position into blocks of at most BLOCK_FLOATS. */
typedef struct {
  int n, m_full;       /* positions along the axis; floats per position before blocking */
  size_t step;         /* floats between consecutive positions */
  int outer;           /* number of independent lines/slabs */
  size_t outer_stride; /* floats between consecutive outer starts */
  int m_block;         /* floats per group */
} AxisPlan;

static AxisPlan plan_axis(const NwVolume *v, int axis)
{
  size_t row = (size_t)v->nx * (size_t)v->nc, slice = row * (size_t)v->ny;
  AxisPlan a;
  if (axis == 0) {
    a = (AxisPlan){v->nx, v->nc, (size_t)v->nc, v->ny * v->nz, row, v->nc};
  } else if (axis == 1) {
    a = (AxisPlan){v->ny, (int)row, row, v->nz, slice, 0};
  } else {
    a = (AxisPlan){v->nz, (int)row, slice, v->ny, row, 0};
  }
  a.m_block = a.m_full < BLOCK_FLOATS ? a.m_full : BLOCK_FLOATS;
  return a;
}

static gboolean smooth_axis(NwVolume *v, int axis, const NwGaussKernel *k, GError **error)
{
  AxisPlan a = plan_axis(v, axis);
  int blocks = (a.m_full + a.m_block - 1) / a.m_block;
  gint64 n_groups = (gint64)a.outer * blocks;
  int n_threads = 1;
#ifdef _OPENMP
  n_threads = omp_get_max_threads();
#endif
  size_t per_thread = (size_t)a.n * (size_t)a.m_block;
  g_autofree float *bufs = g_try_malloc_n((size_t)n_threads * per_thread, sizeof(float));
  if (bufs == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_NOMEM,
                "out of memory for the smoothing buffers (%zu floats)", n_threads * per_thread);
    return FALSE;
  }
#pragma omp parallel for schedule(static)
  for (gint64 g = 0; g < n_groups; g++) {
    int thread = 0;
#ifdef _OPENMP
    thread = omp_get_thread_num();
#endif
    int outer = (int)(g / blocks), block = (int)(g % blocks);
    int e0 = block * a.m_block;
    int m = a.m_full - e0 < a.m_block ? a.m_full - e0 : a.m_block;
    size_t base = (size_t)outer * a.outer_stride + (size_t)e0;
    convolve_group(v->data, base, a.step, a.n, m, k, bufs + (size_t)thread * per_thread);
  }
  return TRUE;
}

gboolean nw_smooth_gaussian(NwVolume *v, const double sigma_vox[3], GError **error)
{
  for (int axis = 0; axis < 3; axis++)
    if (!(sigma_vox[axis] >= 0.0) || !isfinite(sigma_vox[axis])) {
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                  "Gaussian sigma %g voxels along axis %d is invalid: it must be finite and "
                  ">= 0",
                  sigma_vox[axis], axis);
      return FALSE;
    }
  const int dims[3] = {v->nx, v->ny, v->nz};
  for (int axis = 0; axis < 3; axis++) {
    if (dims[axis] == 1 || sigma_vox[axis] == 0.0)
      continue;
    NwGaussKernel k;
    nw_gauss_kernel(&k, sigma_vox[axis]);
    if (k.radius > 0 && !smooth_axis(v, axis, &k, error))
      return FALSE;
  }
  return TRUE;
}

gboolean nw_smooth_sigma_voxels(const NwVolume *v, double sigma_mm, double sigma_vox[3],
                                GError **error)
{
  if (!(sigma_mm >= 0.0) || !isfinite(sigma_mm)) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "Gaussian sigma %g mm is invalid: it must be finite and >= 0", sigma_mm);
    return FALSE;
  }
  for (int axis = 0; axis < 3; axis++) {
    double s = v->spacing_mm[axis];
    if (!(s > 0.0) || !isfinite(s)) {
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                  "voxel spacing %g mm along axis %d is invalid: cannot convert sigma to "
                  "voxels",
                  s, axis);
      return FALSE;
    }
    sigma_vox[axis] = sigma_mm / s;
  }
  return TRUE;
}

gboolean nw_smooth_gaussian_mm(NwVolume *v, double sigma_mm, GError **error)
{
  double sigma_vox[3];
  return nw_smooth_sigma_voxels(v, sigma_mm, sigma_vox, error) &&
         nw_smooth_gaussian(v, sigma_vox, error);
}
