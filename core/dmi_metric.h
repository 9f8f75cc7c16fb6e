/* dmi_metric.h — the distributed mutual-information metric (issue 16; DESIGN.md "mi-dist"):
 * the joint histogram of affine registration's MI (affine_cost.h, plain bins) over a block
 * decomposition of the fixed image (dmi_decomp.h) across ranks, each rank holding its blocks
 * of the fixed image. CPU reference; the CUDA twin (cuda/nw_dmi_cuda.h) computes the same
 * local histograms. One thread per rank (the transport's, dmi_transport.h).
 *
 * The histograms are integer counts: F's bin and M's bin with the level's fixed intensity
 * ranges, which every rank knows (reduced once per level), so the sum of the ranks'
 * histograms is the single-process histogram exactly, whatever the layout, and its mutual
 * information is the single-process cost's bit for bit (nw_affine_cost_cpu without parzen).
 * A Parzen window, where asked, is applied after the reduction to the summed histogram
 * (nw_dmi_parzen_smooth), the same on every rank.
 *
 * Moving samples a rank does not own, two strategies:
 *   replicated   every rank holds the whole moving level (on the GPU: in pinned host
 *                memory, read where the device's slab ends) and samples it directly;
 *   distributed  the moving image is cut by the same layout, each block kept with a halo
 *                of NW_DMI_HALO voxels; a sample belongs to the block of its nearest voxel
 *                (whose window then holds every tap). Per evaluation each rank walks its
 *                fixed voxels in chunks; samples it owns are added at once, the others
 *                become requests (position, fixed bin) aggregated per owner rank and sent
 *                in one all-to-all per chunk, started before the next chunk is computed
 *                and completed after it (communication overlapping computation). The
 *                owner adds the requests it receives to its own histogram.
 * A voxel counts as in affine_cost.h: fixed mask >= 0.5, the position inside the moving
 * domain, the moving mask (nearest) >= 0.5 there. */
#ifndef NW_DMI_METRIC_H
#define NW_DMI_METRIC_H

#include <glib.h>

#include "dmi_decomp.h"
#include "dmi_transport.h"
#include "sampler.h"
#include "volume.h"

G_BEGIN_DECLS

typedef enum {
  NW_DMI_REPLICATED,
  NW_DMI_DISTRIBUTED,
} NwDmiStrategy;

const char *nw_dmi_strategy_name(NwDmiStrategy s); /* "replicated", "distributed" */
/* Error: "--strategy 'X': expected replicated or distributed". */
gboolean nw_dmi_strategy_parse(const char *text, NwDmiStrategy *out, GError **error);

/* Where a level's voxels come from: the region [lo, hi) of an image of n[3] voxels into out
 * (x fastest). In memory (nw_dmi_source_volume), or read from tiles and downsampled
 * (dmi_pyramid.h). */
typedef struct {
  int n[3];
  gboolean (*read)(gpointer data, const int lo[3], const int hi[3], float *out, GError **error);
  gpointer data;
} NwDmiSource;

/* A source that copies from v (borrowed). */
NwDmiSource nw_dmi_source_volume(const NwVolume *v);

/* One fixed block of a rank at a level: its voxels and mask, and (distributed) the moving
 * block of the same index with its halo, and its mask. */
typedef struct {
  int index; /* in the layout */
  int lo[3], hi[3];
  float *fixed, *fixed_mask; /* (hi - lo) voxels; mask NULL without one */
  NwSampleWindow moving, moving_mask; /* distributed; data NULL otherwise / without a mask */
} NwDmiBlock;

/* A rank's share of one level. */
typedef struct {
  NwDmiStrategy strategy;
  NwDmiLayout layout;
  int n_ranks;
  int fixed_n[3], moving_n[3];
  int first_block, n_blocks; /* this rank's blocks in the layout */
  NwDmiBlock *blocks;
  /* replicated: the whole moving level and its mask (data NULL without one) */
  NwSampleWindow moving, moving_mask;
  float *moving_owned, *moving_mask_owned;
} NwDmiLevel;

/* Rank `rank`'s share of a level: its fixed blocks (and masks) read from the sources, and
 * the moving image as the strategy holds it (masks: sources with read NULL for none). */
NwDmiLevel *nw_dmi_level_new(NwDmiStrategy strategy, const NwDmiLayout *layout, int rank,
                             int n_ranks, const NwDmiSource *fixed, const NwDmiSource *fixed_mask,
                             const NwDmiSource *moving, const NwDmiSource *moving_mask,
                             GError **error);
void nw_dmi_level_free(NwDmiLevel *l);
/* Voxels of the fixed image this rank holds (its blocks). */
gint64 nw_dmi_level_fixed_voxels(const NwDmiLevel *l);

typedef struct {
  NwSampler sampler;
  int bins;             /* 4..256 */
  gint64 chunk_voxels;  /* fixed voxels per exchange chunk (distributed), e.g. 1 << 20 */
  /* The memory cap (dmi_decomp.h: one block's bytes on a device), 0: none. The CUDA twin sizes
   * the replicated strategy's resident moving windows from it (dmi_window.h); the CPU's
   * histogram does not depend on it. */
  double cap_mb;
} NwDmiSpec;

typedef struct NwDmiMetric NwDmiMetric;

NwDmiMetric *nw_dmi_metric_new(const NwDmiSpec *spec, NwDmiTransport *t);
void nw_dmi_metric_free(NwDmiMetric *m);
/* The level (borrowed) and the intensity ranges of the bins (affine_cost.h's, known to every
 * rank). Collective: the ranks agree on the number of chunks. */
gboolean nw_dmi_metric_set_level(NwDmiMetric *m, const NwDmiLevel *level, double fixed_lo,
                                 double fixed_hi, double moving_lo, double moving_hi,
                                 GError **error);
/* This rank's joint histogram for map (fixed voxel -> moving voxel, 3x4): bins² counts, fixed
 * bin major, of the samples this rank added (its own and those it was sent). Collective in
 * the distributed strategy. */
gboolean nw_dmi_metric_local(NwDmiMetric *m, const double map[12], gint64 *hist, GError **error);
/* The whole image's joint histogram on every rank: local, then summed over the ranks. */
gboolean nw_dmi_metric_histogram(NwDmiMetric *m, const double map[12], gint64 *hist,
                                 GError **error);
/* The remote requests this rank sent in its last evaluation (for reports and benchmarks). */
gint64 nw_dmi_metric_last_requests(const NwDmiMetric *m);

/* The local histograms as a table, so that a CUDA twin (cuda/nw_dmi_cuda.h) can stand in
 * for the CPU's (nw_dmi_metric_cpu_ops: the functions above). local: as nw_dmi_metric_local,
 * *requests the remote requests it sent. reduce (optional, NULL: the transport's
 * allreduce_i64): the sum of hist over the ranks in place (the CUDA twin's NCCL path). */
typedef struct {
  const char *name; /* "cpu", "cuda" */
  void *(*create)(const NwDmiSpec *spec, NwDmiTransport *t, GError **error);
  gboolean (*set_level)(void *impl, const NwDmiLevel *level, const double ranges[4],
                        GError **error);
  gboolean (*local)(void *impl, const double map[12], gint64 *hist, gint64 *requests,
                    GError **error);
  gboolean (*reduce)(void *impl, gint64 *hist, int n, GError **error);
  void (*destroy)(void *impl);
} NwDmiMetricOps;
extern const NwDmiMetricOps nw_dmi_metric_cpu_ops;
/* The whole image's joint histogram on every rank through ops (impl: its create's): local,
 * then reduce, or the transport's allreduce_i64 where ops has none; *requests as local's. */
gboolean nw_dmi_ops_histogram(const NwDmiMetricOps *ops, void *impl, NwDmiTransport *t,
                              const double map[12], int bins, gint64 *hist, gint64 *requests,
                              GError **error);

typedef struct {
  guint64 evaluations;
  gint64 requests; /* remote requests this rank sent */
} NwDmiCounters;

/* The joint histogram smoothed along the moving axis by the cubic B-spline's weights at
 * -1, 0, 1 bins (1/6, 4/6, 1/6; at the edges the weight that would fall outside stays in the
 * edge bin, so the mass is kept): out = bins² doubles. The Parzen window of the distributed
 * metric, applied to the reduced integer histogram. */
void nw_dmi_parzen_smooth(const gint64 *hist, int bins, gboolean parzen, double *out);

G_END_DECLS

#endif
