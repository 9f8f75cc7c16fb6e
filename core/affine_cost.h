/* affine_cost.h — the one cost evaluation of affine registration: transform + interpolate +
 * metric over the fixed grid, behind a back end that owns the images and does the sums.
 *
 * For a transform T (affine_transform.h) the host composes the voxel map
 * fixed voxel -> moving voxel (affine_resample.h: 12 numbers), and the back end, for every
 * fixed voxel x of the current level that counts, samples the moving image at map(x)
 * (sampler.h) and adds to the sums below. A voxel counts when the fixed mask (if any) is
 * >= 0.5 at x, map(x) lies inside the moving image's domain, and the moving mask (if any,
 * nearest sample) is >= 0.5 there. The host then turns the sums into the metric
 * (nw_affine_cost_from_sums), so both back ends share one definition:
 *   mse  mean (F - M)²                          cost = mse
 *   ncc  Pearson correlation of F and M         cost = 1 - ncc (anticorrelation is a mismatch)
 *   mi   mutual information of the joint       cost = -mi (nats)
 *        histogram, bins × bins: F's bin floor(bins · (F - lo) / (hi - lo)) (clamped); M's
 *        likewise, or with parzen its cubic B-spline window over 4 bins around
 *        u = (bins - 1) · (M - lo) / (hi - lo) (Mattes et al. 2003, IEEE TMI 22:120)
 * Where fewer than NW_AFFINE_MIN_OVERLAP of the fixed voxels inside the fixed mask count,
 * the cost is NW_AFFINE_NO_OVERLAP_COST: the simplex backs off instead of sliding the images
 * apart until nothing is compared.
 *
 * Back ends: the CPU reference (core/cpu/affine_cost_cpu.c); a CUDA twin implements the
 * same table with one fused kernel and block reductions, its images resident per level.
 * A back end is driven from one thread (the job's worker). */
#ifndef NW_AFFINE_COST_H
#define NW_AFFINE_COST_H

#include <glib.h>

#include "affine_quant.h"
#include "affine_transform.h"
#include "sampler.h"
#include "volume.h"

G_BEGIN_DECLS

typedef enum {
  NW_METRIC_MSE,
  NW_METRIC_NCC,
  NW_METRIC_MI,
} NwAffineMetric;

const char *nw_affine_metric_name(NwAffineMetric m); /* "mse", "ncc", "mi" */

/* How a back end keeps the level images it samples (affine_quant.h):
 *   single      float32, positions and weights in double (sampler.h): the reference
 *   u16         normalised unsigned 16 bits per image and level (exact for 8- and 16-bit
 *               inputs, 1/65535 of the range otherwise), positions and weights in float: half
 *               the memory traffic of single. The masks stay float.
 *   u16-filter  u16's codes, and on CUDA the linear sampler's blend made by the texture unit,
 *               whose weights have 8 fractional bits, where the rows kernels run (linear, mse
 *               or ncc, no masks: cuda/affine_cost_rows_cuda.cuh); u16's blend elsewhere. A
 *               sample is within ~1/256 of its taps' spread of u16's, a cost within ~1e-5
 *               relative (docs/PERFORMANCE.md), not bit for bit. The CPU computes u16's.
 * The value 0 is single, so that a spec that does not say keeps the reference. */
typedef enum {
  NW_AFFINE_PRECISION_SINGLE,
  NW_AFFINE_PRECISION_U16,
  NW_AFFINE_PRECISION_U16_FILTER,
} NwAffinePrecision;

const char *nw_affine_precision_name(NwAffinePrecision p); /* "single", "u16", "u16-filter" */
/* The precision nw_affine_precision_name calls name into *out; FALSE for any other name. */
gboolean nw_affine_precision_from_name(const char *name, NwAffinePrecision *out);
/* p keeps the images as 16-bit codes (u16, u16-filter). */
static inline gboolean nw_affine_precision_codes(NwAffinePrecision p)
{
  return p != NW_AFFINE_PRECISION_SINGLE;
}

#define NW_AFFINE_MIN_OVERLAP 0.1
#define NW_AFFINE_NO_OVERLAP_COST 1e30

typedef struct {
  NwAffineMetric metric;
  NwSampler sampler;
  int bins;        /* mi: 4..256 */
  gboolean parzen; /* mi: B-spline window on the moving intensity */
  /* What a back end needs beyond the images, its own (NULL for the CPU and CUDA costs; the
   * distributed metric's context, dmi_cost.c, which its create takes over). */
  const void *backend_data;
} NwAffineCostSpec;

/* One pyramid level as a back end sees it; borrowed until the next set_level or destroy. */
typedef struct {
  int dim;                                  /* 2 or 3 */
  const NwVolume *fixed, *moving;           /* scalar, finite */
  const NwVolume *fixed_mask, *moving_mask; /* NULL or on fixed's / moving's grid */
  /* Subtracted from F and M before the sums (their means: precision of the squares). */
  double fixed_shift, moving_shift;
  /* mi: the intensity ranges mapped onto the bins (lo < hi). */
  double fixed_lo, fixed_hi, moving_lo, moving_hi;
  /* Fixed voxels inside the fixed mask (all when there is none), for the overlap. */
  double n_fixed;
  /* u16: the quantisation of each image (affine_quant.h: its range over all voxels, masks
   * aside, and whether it holds integers only); set by nw_affine_cost_set_level. */
  NwQuant fixed_quant, moving_quant;
  /* Storage and arithmetic of the samples (the caller's; single when not said). */
  NwAffinePrecision precision;
} NwAffineLevel;

/* What a back end reduces over the counted voxels, with F and M shifted. joint: bins·bins
 * counts (fixed bin major: joint[bf * bins + bm]), mi only; the caller owns it. */
typedef struct {
  double n, sf, sm, sff, smm, sfm;
  double *joint;
} NwAffineSums;

/* Both back ends add the histogram's masses as integers of 1/NW_AFFINE_HIST_ONE of a count
 * (a Parzen weight w as w · NW_AFFINE_HIST_ONE rounded to nearest, ties to even): integer
 * additions are exact in any order, so the histogram is the same however the voxels are
 * shared among threads or blocks, and plain counts stay exact. */
#define NW_AFFINE_HIST_ONE 16777216.0 /* 2^24 */

/* Statistics of an image over its mask (>= 0.5) for nw_affine_cost_set_level: the sum and
 * count of the voxels, their smallest and largest value. Partial statistics (of blocks, of
 * ranks) merge into those of the whole. */
typedef struct {
  double sum, n, lo, hi;
} NwAffineStats;
void nw_affine_stats_init(NwAffineStats *s); /* empty: n = 0, lo = +inf, hi = -inf */
void nw_affine_stats_merge(NwAffineStats *s, const NwAffineStats *part);
/* Adds the nv voxels of v (one component) where mask (NULL: everywhere) is >= 0.5. */
void nw_affine_stats_add(NwAffineStats *s, const float *v, const float *mask, size_t nv);

typedef struct {
  const char *name; /* "cpu", "cuda" */
  void *(*create)(const NwAffineCostSpec *spec, GError **error);
  gboolean (*set_level)(void *impl, const NwAffineLevel *level, GError **error);
  /* The sums for map (fixed voxel -> moving voxel, 3x4 row-major); sums->joint is zeroed and
   * filled by the back end when the metric is mi. */
  gboolean (*evaluate)(void *impl, const double map[12], NwAffineSums *sums, GError **error);
  void (*destroy)(void *impl);
  /* Optional (NULL: nw_pyramid_new on the host, and set_level copies each level it is
   * given): v's pyramid of exactly n_levels levels (nw_pyramid_levels), equal bit for bit to
   * nw_pyramid_new's, made by the back end and kept there for the cost's life; set_level
   * then finds a level of it by its host volume, which the caller owns (nw_pyramid_free) and
   * keeps until the cost is freed. Level 0 (the coarsest: the starts read it) holds its
   * voxels; the finer levels may be headers without voxels (data NULL: nothing on the host
   * reads them, and copying them there cost most of a job's creation), whose voxels
   * level_voxels gives and whose statistics level_stats computes. NULL without an error: the
   * back end declines (too little device memory, a full table), and the host makes the
   * pyramid. */
  NwVolume **(*pyramid)(void *impl, const NwVolume *v, int n_levels, GError **error);
  /* Optional (NULL: nw_affine_resample on the host): the current level's moving image
   * sampled with sampler at map (as evaluate's) for every fixed voxel, background outside,
   * into out (the fixed level's voxel count). */
  gboolean (*warp)(void *impl, const double map[12], NwSampler sampler, float background,
                   float *out, GError **error);
  /* Optional (NULL: evaluate k times): the sums of k <= NW_AFFINE_MAX_BATCH maps at once,
   * each what evaluate gives for it but for the order of the additions (the optimiser's
   * gradient probes: on the GPU one launch instead of k, and the probes, a fraction of a
   * voxel apart, share what they read). sums[q].joint as evaluate's. */
  gboolean (*evaluate_batch)(void *impl, const double (*maps)[12], int k, NwAffineSums *sums,
                             GError **error);
  /* Optional (NULL: the host reads level's images): the statistics of the level's fixed image
   * over the fixed mask and of its moving image over the moving mask, for a back end whose
   * level volumes are headers without voxels (the distributed metric, dmi_cost.h: each rank
   * holds blocks, and the statistics are reduced over the ranks; the CUDA cost, whose
   * pyramids stay on the device). quant: NULL, or (precision u16) the fixed and moving
   * images' quantisations ([2], affine_quant.h: each over all its voxels, masks aside), which
   * the caller has set to the level's and a back end that keeps no codes may leave. */
  gboolean (*level_stats)(void *impl, const NwAffineLevel *level, NwAffineStats *fixed,
                          NwAffineStats *moving, NwQuant *quant, GError **error);
  /* Optional (with pyramid): the voxels of level, a level of one of pyramid's pyramids whose
   * host volume is a header, into out (its voxel count). */
  gboolean (*level_voxels)(void *impl, const NwVolume *level, float *out, GError **error);
} NwAffineCostBackend;

/* Maps per evaluate_batch call at most: a centre and two probes per parameter of a 3D
 * affine transform (12), with room. */
#define NW_AFFINE_MAX_BATCH 32

extern const NwAffineCostBackend nw_affine_cost_cpu; /* core/cpu/affine_cost_cpu.c */

/* v's component 0 as 16-bit codes of q (affine_quant.h), g_free'd by the caller: the CPU
 * twin's u16 storage, and the reference the device's quantisation is tested against. */
uint16_t *nw_affine_quantise(const NwVolume *v, NwQuant q);

typedef struct {
  double cost;    /* what the optimiser minimises */
  double value;   /* the metric itself: mse, ncc or mi (nats) */
  double overlap; /* fraction of the fixed voxels inside the fixed mask that counted */
} NwAffineCostValue;

/* The metric from the sums of one evaluation (the table above). */
void nw_affine_cost_from_sums(const NwAffineCostSpec *spec, const NwAffineLevel *level,
                              const NwAffineSums *sums, NwAffineCostValue *out);
/* The MI histograms' bin of a value (plain) and the four B-spline weights of the window
 * starting at *first (parzen), shared by the back ends. */
int nw_affine_bin(double v, double lo, double hi, int bins);
/* Mutual information (nats) of a joint histogram (bins², fixed bin major) of total mass n. */
double nw_affine_mutual_information(const double *joint, int bins, double n);
void nw_affine_parzen(double v, double lo, double hi, int bins, int *first, double w[4]);

/* ---- the evaluation the optimiser calls ------------------------------------------------- */
typedef struct NwAffineCost NwAffineCost;

NwAffineCost *nw_affine_cost_new(const NwAffineCostBackend *be, const NwAffineCostSpec *spec,
                                 GError **error);
void nw_affine_cost_free(NwAffineCost *c);
/* Make level the current one: the shifts, ranges and n_fixed are computed here from the
 * images and masks (the caller fills dim and the volumes). */
gboolean nw_affine_cost_set_level(NwAffineCost *c, const NwAffineLevel *level, GError **error);
/* The cost of t (fixed world -> moving world) at the current level. */
gboolean nw_affine_cost_eval(NwAffineCost *c, const NwTransform *t, NwAffineCostValue *out,
                             GError **error);
/* The costs of k <= NW_AFFINE_MAX_BATCH 4x4 RAS matrices at the current level, through the
 * back end's evaluate_batch where it has one: out[q] is nw_affine_cost_eval_matrix's for
 * t_ras[q] (to rounding: the order of the sums). */
gboolean nw_affine_cost_eval_batch(NwAffineCost *c, const double (*t_ras)[16], int k,
                                   NwAffineCostValue *out, GError **error);
/* The same for a 4x4 RAS matrix. */
gboolean nw_affine_cost_eval_matrix(NwAffineCost *c, const double t_ras[16], NwAffineCostValue *out,
                                    GError **error);
/* v's pyramid of n_levels levels (pyramid.h: 0 = coarsest), made by the back end where it
 * can (images resident on the device for the cost's life; the levels above 0 may then be
 * headers without voxels: the backend's pyramid above), else by nw_pyramid_new; free with
 * nw_pyramid_free after the cost. */
NwVolume **nw_affine_cost_pyramid(NwAffineCost *c, const NwVolume *v, int n_levels, GError **error);
/* A new host volume with the voxels of a level of nw_affine_cost_pyramid's: a copy of its
 * own, or, for a header, the back end's (level_voxels). */
NwVolume *nw_affine_cost_level_copy(NwAffineCost *c, const NwVolume *level, GError **error);
/* Starts making the volume that the first nw_affine_cost_warp onto grid's grid (a level whose
 * fixed image is on it) writes, on a thread of its own: allocated and every page written
 * once, while the caller evaluates. Why: a warp into fresh memory waits for the kernel to
 * fault in and zero its pages (a 3072² result's copy out of the pinned stage: 2.2-2.7 ms
 * fresh, 0.8 ms into touched pages, on the H100 host). Back ends without a warp of their own
 * ignore it; asking again or freeing the cost drops a volume not taken. */
void nw_affine_cost_prepare_warp(NwAffineCost *c, const NwVolume *grid);
/* The current level's moving image through t (fixed world -> moving world) on the current
 * level's fixed grid (nw_affine_resample with background 0), by the back end where it can
 * (into the prepared volume, where there is one). */
NwVolume *nw_affine_cost_warp(NwAffineCost *c, const double t_ras[16], NwSampler sampler,
                              GError **error);
/* Evaluations since creation. */
guint64 nw_affine_cost_count(const NwAffineCost *c);
/* Requests since creation that evaluated: single evaluations and batches (each batch one
 * request, one launch on the GPU, however many evaluations it holds). A batch the back end
 * takes one by one counts as its evaluations. */
guint64 nw_affine_cost_requests(const NwAffineCost *c);

G_END_DECLS

#endif
