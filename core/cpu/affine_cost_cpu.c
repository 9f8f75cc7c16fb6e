/* affine_cost_cpu.c — the CPU reference of the affine cost (affine_cost.h): for every fixed
 * voxel of the level, the mask test, the voxel map, the moving sample (sampler.h; with
 * precision u16, affine_quant.h on the level's 16-bit codes, made at set_level) and the
 * sums, in plain loops. OpenMP over the fixed rows: sums by reduction, MI histograms one per
 * thread (made at set_level, so an evaluation allocates nothing) added up at the end.
 * The job's worker thread. */
#include "affine_cost.h"

#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "affine_quant.h"
#include "nw_error.h"

/* Fixed voxels below which an evaluation runs on one thread. */
#define NW_AFFINE_CPU_PARALLEL_MIN (1 << 16)

typedef struct {
  NwAffineCostSpec spec;
  NwAffineLevel level;
  int n_threads;
  double *hist; /* n_threads · bins², mi only */
  /* precision u16: the level's fixed and moving images as codes, and their quantisations */
  uint16_t *qf, *qm;
  NwQuant quant_f, quant_m;
} CpuCost;

static void *cpu_create(const NwAffineCostSpec *spec, GError **error)
{
  CpuCost *c = g_new0(CpuCost, 1);
  c->spec = *spec;
#ifdef _OPENMP
  c->n_threads = omp_get_max_threads();
#else
  c->n_threads = 1;
#endif
  if (spec->metric == NW_METRIC_MI)
    c->hist = g_new0(double, (gsize)c->n_threads *(gsize)spec->bins *(gsize)spec->bins);
  return c;
}

static void cpu_destroy(void *impl)
{
  CpuCost *c = impl;
  if (c == NULL)
    return;
  g_free(c->hist);
  g_free(c->qf);
  g_free(c->qm);
  g_free(c);
}

static gboolean cpu_set_level(void *impl, const NwAffineLevel *level, GError **error)
{
  CpuCost *c = impl;
  c->level = *level;
  if (c->level.precision != NW_AFFINE_PRECISION_U16)
    return TRUE;
  c->quant_f = level->fixed_quant;
  c->quant_m = level->moving_quant;
  g_free(c->qf);
  g_free(c->qm);
  c->qf = nw_affine_quantise(level->fixed, c->quant_f);
  c->qm = nw_affine_quantise(level->moving, c->quant_m);
  return TRUE;
}

uint16_t *nw_affine_quantise(const NwVolume *v, NwQuant q)
{
  const gint64 n = (gint64)nw_volume_n_voxels(v);
  uint16_t *out = g_new(uint16_t, MAX(n, 1));
#pragma omp parallel for schedule(static) if (n >= NW_AFFINE_CPU_PARALLEL_MIN)
  for (gint64 e = 0; e < n; e++)
    out[e] = nw_quant_code(q, v->data[(size_t)e * (size_t)v->nc]);
  return out;
}

/* The moving mask at moving voxel position p (nearest), TRUE without a mask. */
static inline gboolean moving_mask_ok(const NwVolume *mask, double x, double y, double z)
{
  float m = 0.0f;
  return mask == NULL || (nw_sampler_sample(mask, NW_SAMPLER_NEAREST, x, y, z, &m) && m >= 0.5f);
}

/* Adds one sample pair to the thread's histogram h (bins²). */
static inline void add_joint(const CpuCost *c, double *h, double f, double m)
{
  const NwAffineLevel *l = &c->level;
  const int bins = c->spec.bins;
  const int bf = nw_affine_bin(f, l->fixed_lo, l->fixed_hi, bins);
  if (!c->spec.parzen) {
    h[bf * bins + nw_affine_bin(m, l->moving_lo, l->moving_hi, bins)] += 1.0;
    return;
  }
  int first;
  double w[4];
  nw_affine_parzen(m, l->moving_lo, l->moving_hi, bins, &first, w);
  for (int q = 0; q < 4; q++)
    h[bf * bins + CLAMP(first + q, 0, bins - 1)] += w[q];
}

/* The sample of the level's codes at (x, y, z) with the spec's sampler, as a value; FALSE
 * outside the domain or the moving mask. The CUDA kernel's u16 path, line for line. */
static inline gboolean sample_u16(const CpuCost *c, float x, float y, float z, double *m)
{
  const NwVolume *M = c->level.moving, *mmask = c->level.moving_mask;
  if (!nw_quant_inside(x, y, z, M->nx, M->ny, M->nz))
    return FALSE;
  float q;
  if (c->spec.sampler == NW_SAMPLER_NEAREST)
    q = (float)c->qm[nw_quant_nearest(x, y, z, M->nx, M->ny, M->nz)];
  else if (c->spec.sampler == NW_SAMPLER_LINEAR)
    q = nw_quant_linear(c->qm, M->nx, M->ny, M->nz, x, y, z);
  else
    q = nw_quant_cubic(c->qm, M->nx, M->ny, M->nz, x, y, z);
  if (mmask != NULL && !(mmask->data[nw_quant_nearest(x, y, z, M->nx, M->ny, M->nz)] >= 0.5f))
    return FALSE;
  *m = nw_quant_value(c->quant_m, q);
  return TRUE;
}

/* Fixed voxel e = (i, j, k) and the moving sample under the map at precision single (the
 * reference: positions and weights in double); FALSE outside the domain or the moving mask. */
static inline gboolean pair_single(const CpuCost *c, const double map[12], int i, double j,
                                   double k, size_t e, double *f, double *m)
{
  const NwAffineLevel *l = &c->level;
  const double x = map[0] * i + map[1] * j + map[2] * k + map[3];
  const double y = map[4] * i + map[5] * j + map[6] * k + map[7];
  const double z = map[8] * i + map[9] * j + map[10] * k + map[11];
  float mv;
  if (!nw_sampler_sample(l->moving, c->spec.sampler, x, y, z, &mv) ||
      !moving_mask_ok(l->moving_mask, x, y, z))
    return FALSE;
  *f = (double)l->fixed->data[e];
  *m = (double)mv;
  return TRUE;
}

/* The same at precision u16: positions in float from the map rounded once (mf), samples of
 * the level's codes (affine_quant.h). j and k are whole numbers, so (float)j is the float of
 * the row index itself. */
static inline gboolean pair_u16(const CpuCost *c, const float mf[12], int i, double j, double k,
                                size_t e, double *f, double *m)
{
  const float fi = (float)i, fj = (float)j, fk = (float)k;
  const float x = nw_quant_map_row(mf, fi, fj, fk), y = nw_quant_map_row(mf + 4, fi, fj, fk),
              z = nw_quant_map_row(mf + 8, fi, fj, fk);
  if (!sample_u16(c, x, y, z, m))
    return FALSE;
  *f = nw_quant_value(c->quant_f, (float)c->qf[e]);
  return TRUE;
}

/* The sums (and the threads' histograms) over the fixed voxels of the level, at the level's
 * precision. */
static void evaluate_rows(CpuCost *c, const double map[12], NwAffineSums *out)
{
  const NwAffineLevel *l = &c->level;
  const NwVolume *F = l->fixed, *fmask = l->fixed_mask;
  const gboolean mi = c->spec.metric == NW_METRIC_MI;
  const gboolean u16 = l->precision == NW_AFFINE_PRECISION_U16;
  const size_t hist_len = mi ? (size_t)c->spec.bins * (size_t)c->spec.bins : 0;
  float mf[12];
  for (int q = 0; q < 12; q++)
    mf[q] = (float)map[q];
  double n = 0, sf = 0, sm = 0, sff = 0, smm = 0, sfm = 0;
  const gint64 rows = (gint64)F->ny * F->nz;
  /* Threads only where there is work for them: on a busy machine a small level's
   * evaluation is slower with a team than without. */
  const gboolean team = (gint64)nw_volume_n_voxels(F) >= NW_AFFINE_CPU_PARALLEL_MIN;
  (void)team; /* unused without OpenMP */
#pragma omp parallel for schedule(static) reduction(+ : n, sf, sm, sff, smm, sfm) if (team)
  for (gint64 row = 0; row < rows; row++) {
#ifdef _OPENMP
    double *h = mi ? c->hist + (size_t)omp_get_thread_num() * hist_len : NULL;
#else
    double *h = c->hist;
#endif
    const double j = (double)(row % F->ny), k = (double)(row / F->ny);
    const size_t base = (size_t)row * (size_t)F->nx;
    for (int i = 0; i < F->nx; i++) {
      if (fmask != NULL && !(fmask->data[base + i] >= 0.5f))
        continue;
      double f, m;
      if (!(u16 ? pair_u16(c, mf, i, j, k, base + i, &f, &m)
                : pair_single(c, map, i, j, k, base + i, &f, &m)))
        continue;
      if (mi)
        add_joint(c, h, f, m);
      const double fs = f - l->fixed_shift, ms = m - l->moving_shift;
      n += 1.0;
      sf += fs;
      sm += ms;
      sff += fs * fs;
      smm += ms * ms;
      sfm += fs * ms;
    }
  }
  *out = (NwAffineSums){n, sf, sm, sff, smm, sfm, out->joint};
}

static gboolean cpu_evaluate(void *impl, const double map[12], NwAffineSums *out, GError **error)
{
  CpuCost *c = impl;
  (void)error;
  const gboolean mi = c->spec.metric == NW_METRIC_MI;
  const size_t hist_len = mi ? (size_t)c->spec.bins * (size_t)c->spec.bins : 0;
  if (mi)
    memset(c->hist, 0, (size_t)c->n_threads * hist_len * sizeof(double));
  evaluate_rows(c, map, out);
  if (mi) {
    memset(out->joint, 0, hist_len * sizeof(double));
    for (int t = 0; t < c->n_threads; t++)
      for (size_t b = 0; b < hist_len; b++)
        out->joint[b] += c->hist[(size_t)t * hist_len + b];
  }
  return TRUE;
}

const NwAffineCostBackend nw_affine_cost_cpu = {
    .name = "cpu",
    .create = cpu_create,
    .set_level = cpu_set_level,
    .evaluate = cpu_evaluate,
    .destroy = cpu_destroy,
};
