/* dmi_cost.h — affine registration with the distributed MI metric (issue 16): the "affine"
 * job (affine_method.h: the same pyramid, starts and GSL simplex) over a cost back end whose
 * evaluation is the ranks' reduced integer joint histogram (dmi_metric.h).
 *
 * Every rank creates the job with the same parameters and steps it in lockstep: the reduced
 * histogram is the same on every rank, so every rank's simplex takes the same path and makes
 * the same collective calls; no transform is broadcast (rank 0 writing the outputs is the
 * caller's). The coarsest level's whole images, gathered from the ranks' blocks, give the
 * starts (mass, moments) as the single-process job's; the levels' voxels never leave their
 * blocks otherwise. With parzen off and the same images, the single-process CPU job's costs
 * are met bit for bit, so its transform too (tests/test_dmi.c).
 * The rank's thread (the transport's). */
#ifndef NW_DMI_COST_H
#define NW_DMI_COST_H

#include "affine_method.h"
#include "dmi_pyramid.h"

G_BEGIN_DECLS

typedef struct {
  NwDmiTransport *t; /* borrowed; outlives the job */
  NwDmiStrategy strategy;
  NwDmiLayout layout;
  gint64 chunk_voxels; /* 0: dmi_metric.h's default */
  double cap_mb;       /* --memory-cap (0: none): sizes the GPU's resident windows */
  int dim;
  /* The images' finest levels: grids (headers; data may be NULL) and where their voxels
   * come from (masks: read NULL for none); borrowed until nw_dmi_job_new returns. The moving
   * image of the replicated strategy is read whole, once, per level from its source. */
  const NwVolume *fixed_grid, *moving_grid;
  NwDmiSource fixed, fixed_mask, moving, moving_mask;
  /* The local histograms: NULL for the CPU's (nw_dmi_metric_cpu_ops), or the CUDA twin's. */
  const NwDmiMetricOps *ops;
  /* Updated as the job runs (may be NULL): evaluations, and remote requests this rank sent. */
  NwDmiCounters *counters;
} NwDmiInputs;

/* The job on this rank (collective: every rank calls it). p: "affine"'s parameters, metric
 * mi. Errors: a metric other than mi ("affine --distributed: the distributed metric is mutual
 * information: use --metric mi (not ncc)"), a block that cannot be read (the source's). */
NwAffineJob *nw_dmi_job_new(const NwDmiInputs *in, const NwParams *p,
                            const double *initial_transform, GError **error);
/* The cost back end itself, for a caller that drives nw_affine_cost_* directly (the
 * benchmark): spec.backend_data is an NwDmiCostData that create takes over (g_free'd by
 * destroy, with the levels it holds). */
typedef struct {
  NwDmiTransport *t;
  const NwDmiMetricOps *ops; /* NULL: the CPU's */
  gint64 chunk_voxels;
  double cap_mb;
  int n_levels;
  const NwVolume *fixed_grid[NW_DMI_MAX_LEVELS]; /* the level headers set_level is given */
  NwDmiLevel *levels[NW_DMI_MAX_LEVELS];          /* the rank's share of each, owned */
  NwDmiCounters *counters;
} NwDmiCostData;
extern const NwAffineCostBackend nw_dmi_cost;

G_END_DECLS

#endif
