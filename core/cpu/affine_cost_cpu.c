/* affine_cost_cpu.c — the CPU reference of the affine cost (affine_cost.h): for every fixed
 * voxel of the level, the mask test, the voxel map, the moving sample (sampler.h; with
 * precision u16, affine_quant.h on the level's 16-bit codes, made at set_level) and the
 * sums, in plain loops. OpenMP over chunks of fixed rows whose sums are combined in chunk
 * order (ordered_sums.h), and MI histograms one per thread in fixed point (affine_cost.h:
 * integers, added up exactly at the end): an evaluation gives the same bits for any number
 * of threads, so the optimiser takes the same path on every machine.
 * The job's worker thread. */
#include "affine_cost.h"

#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "affine_quant.h"
#include "nw_error.h"
#include "ordered_sums.h"

/* Fixed voxels below which an evaluation runs on one thread: on a busy machine a small
 * level's evaluation is slower with a team than without. */
#define NW_AFFINE_CPU_PARALLEL_MIN (1 << 16)
/* Fixed voxels per chunk of the sums, in whole rows: the chunks fix the order of the
 * additions; small enough that a middle level (46 x 55 x 46: 29 chunks) still gives every
 * thread of a 16-core host work. */
#define NW_AFFINE_CPU_CHUNK 4096

typedef struct {
  NwAffineCostSpec spec;
  NwAffineLevel level;
  int n_threads;  /* histograms in hist */
  uint64_t *hist; /* n_threads · bins², fixed point (NW_AFFINE_HIST_ONE), mi only */
  /* precision u16: the level's fixed and moving images as codes, and their quantisations */
  uint16_t *qf, *qm;
  NwQuant quant_f, quant_m;
} CpuCost;

static void *cpu_create(const NwAffineCostSpec *spec, GError **error)
{
  (void)error;
  CpuCost *c = g_new0(CpuCost, 1);
  c->spec = *spec;
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

static size_t hist_len(const CpuCost *c)
{
  return c->spec.metric == NW_METRIC_MI ? (size_t)c->spec.bins * (size_t)c->spec.bins : 0;
}

/* Zeroed histograms for as many threads as an evaluation may now use (the count can change
 * between evaluations: omp_set_num_threads); they grow, and are reused. */
static void reset_histograms(CpuCost *c)
{
#ifdef _OPENMP
  const int threads = omp_get_max_threads();
#else
  const int threads = 1;
#endif
  if (threads > c->n_threads) {
    g_free(c->hist);
    c->hist = g_new(uint64_t, (size_t)threads * hist_len(c));
    c->n_threads = threads;
  }
  memset(c->hist, 0, (size_t)c->n_threads * hist_len(c) * sizeof(uint64_t));
}

static gboolean cpu_set_level(void *impl, const NwAffineLevel *level, GError **error)
{
  CpuCost *c = impl;
  c->level = *level;
  if (!nw_affine_precision_codes(c->level.precision)) /* u16-filter: u16's, exactly */
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

/* w · NW_AFFINE_HIST_ONE (0 <= w <= 1) rounded to the nearest integer, ties to even as the
 * device's __double2ull_rn: beside 2^52 a double has no bits left for a fraction, so adding
 * it rounds, and taking it away again is exact. Not llrint: a call in the loop, even one
 * not taken, made the compiler keep the sums in memory (every evaluation 5 % slower). */
static inline uint64_t hist_mass(double w)
{
  return (uint64_t)(int64_t)((w * NW_AFFINE_HIST_ONE + 0x1p52) - 0x1p52); /* int64: one cvt */
}

/* Adds one sample pair to the thread's histogram h (bins², fixed point). */
static inline void add_joint(const CpuCost *c, uint64_t *h, double f, double m)
{
  const NwAffineLevel *l = &c->level;
  const int bins = c->spec.bins;
  const int bf = nw_affine_bin(f, l->fixed_lo, l->fixed_hi, bins);
  if (!c->spec.parzen) {
    h[bf * bins + nw_affine_bin(m, l->moving_lo, l->moving_hi, bins)] +=
        (uint64_t)NW_AFFINE_HIST_ONE;
    return;
  }
  int first;
  double w[4];
  nw_affine_parzen(m, l->moving_lo, l->moving_hi, bins, &first, w);
  for (int q = 0; q < 4; q++)
    h[bf * bins + CLAMP(first + q, 0, bins - 1)] += hist_mass(w[q]);
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

/* An evaluation's inputs, for the chunks of nw_ordered_reduce_split. */
typedef struct {
  const CpuCost *c;
  const double *map; /* 3x4, fixed voxel -> moving voxel */
  float mf[12];      /* the same rounded to float once (u16) */
} EvalIn;

enum { SUM_N, SUM_F, SUM_M, SUM_FF, SUM_MM, SUM_FM, SUM_COUNT };

/* The sums over fixed rows [begin, end) of the level into a (and the pairs into the calling
 * thread's histogram), with the level's images as codes (u16) or floats. Inlined into each
 * of rows_chunk's two calls, so that each loop is compiled for one precision, and the count
 * an integer, a register fewer: the loop as fast as the reduction's it replaces. */
static G_ALWAYS_INLINE inline void rows_sums(const EvalIn *in, gboolean u16, size_t begin,
                                             size_t end, double *a)
{
  const CpuCost *c = in->c;
  const NwAffineLevel *l = &c->level;
  const NwVolume *F = l->fixed, *fmask = l->fixed_mask;
#ifdef _OPENMP
  uint64_t *h = c->hist != NULL ? c->hist + (size_t)omp_get_thread_num() * hist_len(c) : NULL;
#else
  uint64_t *h = c->hist;
#endif
  size_t n = 0;
  double sf = 0, sm = 0, sff = 0, smm = 0, sfm = 0;
  for (size_t row = begin; row < end; row++) {
    const double j = (double)(row % (size_t)F->ny), k = (double)(row / (size_t)F->ny);
    const size_t base = row * (size_t)F->nx;
    for (int i = 0; i < F->nx; i++) {
      if (fmask != NULL && !(fmask->data[base + i] >= 0.5f))
        continue;
      double f, m;
      if (!(u16 ? pair_u16(c, in->mf, i, j, k, base + i, &f, &m)
                : pair_single(c, in->map, i, j, k, base + i, &f, &m)))
        continue;
      if (h != NULL)
        add_joint(c, h, f, m);
      const double fs = f - l->fixed_shift, ms = m - l->moving_shift;
      n++;
      sf += fs;
      sm += ms;
      sff += fs * fs;
      smm += ms * ms;
      sfm += fs * ms;
    }
  }
  a[SUM_N] += (double)n;
  a[SUM_F] += sf;
  a[SUM_M] += sm;
  a[SUM_FF] += sff;
  a[SUM_MM] += smm;
  a[SUM_FM] += sfm;
}

static void rows_chunk(double *a, size_t begin, size_t end, const void *user)
{
  const EvalIn *in = user;
  if (nw_affine_precision_codes(in->c->level.precision))
    rows_sums(in, TRUE, begin, end, a);
  else
    rows_sums(in, FALSE, begin, end, a);
}

/* The level's rows cut into chunks of about NW_AFFINE_CPU_CHUNK voxels (a function of the
 * grid alone), with a team from NW_AFFINE_CPU_PARALLEL_MIN voxels. */
static NwOrderedSplit rows_split(const NwVolume *F)
{
  const size_t rows = MAX(1, NW_AFFINE_CPU_CHUNK / F->nx);
  const size_t voxels = rows * (size_t)F->nx;
  return (NwOrderedSplit){rows, (NW_AFFINE_CPU_PARALLEL_MIN + voxels - 1) / voxels};
}

/* The threads' histograms added up, in counts. */
static void gather_joint(const CpuCost *c, double *joint)
{
  const size_t len = hist_len(c);
  for (size_t b = 0; b < len; b++) {
    uint64_t mass = 0;
    for (int t = 0; t < c->n_threads; t++)
      mass += c->hist[(size_t)t * len + b];
    joint[b] = (double)mass / NW_AFFINE_HIST_ONE;
  }
}

static gboolean cpu_evaluate(void *impl, const double map[12], NwAffineSums *out, GError **error)
{
  CpuCost *c = impl;
  (void)error;
  const NwVolume *F = c->level.fixed;
  const gboolean mi = c->spec.metric == NW_METRIC_MI;
  if (mi)
    reset_histograms(c);
  EvalIn in = {.c = c, .map = map};
  for (int q = 0; q < 12; q++)
    in.mf[q] = (float)map[q];
  double v[SUM_COUNT];
  nw_ordered_reduce_split(v, SUM_COUNT, NULL, (size_t)F->ny * (size_t)F->nz, rows_split(F),
                          rows_chunk, &in);
  *out = (NwAffineSums){v[SUM_N], v[SUM_F], v[SUM_M], v[SUM_FF], v[SUM_MM], v[SUM_FM], out->joint};
  if (mi)
    gather_joint(c, out->joint);
  return TRUE;
}

const NwAffineCostBackend nw_affine_cost_cpu = {
    .name = "cpu",
    .create = cpu_create,
    .set_level = cpu_set_level,
    .evaluate = cpu_evaluate,
    .destroy = cpu_destroy,
};
