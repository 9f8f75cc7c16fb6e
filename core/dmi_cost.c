/* dmi_cost.c — see dmi_cost.h: the cost back end over the ranks' histograms, and the job's
 * levels, headers and starts made from the ranks' blocks. The rank's thread. */
#include "dmi_cost.h"

#include <string.h>

#include "nw_error.h"
#include "pyramid.h"
#include "resample.h"

/* ---- the cost back end ----------------------------------------------------------------- */

typedef struct {
  NwDmiCostData *d;
  NwAffineCostSpec spec;
  const NwDmiMetricOps *ops;
  void *metric;
  gint64 *hist; /* bins² */
} DmiCost;

static void dmi_destroy(void *impl)
{
  DmiCost *c = impl;
  if (c == NULL)
    return;
  if (c->metric != NULL)
    c->ops->destroy(c->metric);
  for (int l = 0; l < c->d->n_levels; l++)
    nw_dmi_level_free(c->d->levels[l]);
  g_free(c->d);
  g_free(c->hist);
  g_free(c);
}

static void *dmi_create(const NwAffineCostSpec *spec, GError **error)
{
  g_return_val_if_fail(spec->backend_data != NULL, NULL);
  DmiCost *c = g_new0(DmiCost, 1);
  c->d = (NwDmiCostData *)spec->backend_data;
  c->spec = *spec;
  c->ops = c->d->ops != NULL ? c->d->ops : &nw_dmi_metric_cpu_ops;
  c->hist = g_new0(gint64, (gsize)spec->bins * (gsize)spec->bins);
  if (spec->metric != NW_METRIC_MI) {
    g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED,
                "affine --distributed: the distributed metric is mutual information: use "
                "--metric mi (not %s)",
                nw_affine_metric_name(spec->metric));
    dmi_destroy(c);
    return NULL;
  }
  const NwDmiSpec ms = {spec->sampler, spec->bins, c->d->chunk_voxels, c->d->cap_mb};
  if ((c->metric = c->ops->create(&ms, c->d->t, error)) == NULL) {
    dmi_destroy(c);
    return NULL;
  }
  return c;
}

static const NwDmiLevel *level_of(const DmiCost *c, const NwAffineLevel *level)
{
  for (int l = 0; l < c->d->n_levels; l++)
    if (c->d->fixed_grid[l] == level->fixed)
      return c->d->levels[l];
  return NULL;
}

static gboolean dmi_set_level(void *impl, const NwAffineLevel *level, GError **error)
{
  DmiCost *c = impl;
  const NwDmiLevel *l = level_of(c, level);
  g_return_val_if_fail(l != NULL, FALSE);
  const double ranges[4] = {level->fixed_lo, level->fixed_hi, level->moving_lo, level->moving_hi};
  return c->ops->set_level(c->metric, l, ranges, error);
}

/* The voxels [lo, hi) of window w (and its mask) into s. */
static void window_stats(NwAffineStats *s, const NwSampleWindow *w, const NwSampleWindow *mask,
                         const int lo[3], const int hi[3])
{
  for (int k = lo[2]; k < hi[2]; k++)
    for (int j = lo[1]; j < hi[1]; j++) {
      const size_t at = ((size_t)(k - w->lo[2]) * (size_t)w->n[1] + (size_t)(j - w->lo[1])) *
                            (size_t)w->n[0] +
                        (size_t)(lo[0] - w->lo[0]);
      nw_affine_stats_add(s, w->data + at, mask->data != NULL ? mask->data + at : NULL,
                          (size_t)(hi[0] - lo[0]));
    }
}

/* The statistics of the whole level: each voxel counted by the one rank whose block holds
 * it (the replicated moving image by rank 0), then reduced. */
static gboolean dmi_level_stats(void *impl, const NwAffineLevel *level, NwAffineStats *f,
                                NwAffineStats *m, NwQuant *quant, GError **error)
{
  (void)quant; /* float blocks, no codes: the job runs at precision single */
  DmiCost *c = impl;
  const NwDmiLevel *l = level_of(c, level);
  g_return_val_if_fail(l != NULL, FALSE);
  NwDmiTransport *t = c->d->t;
  nw_affine_stats_init(f);
  nw_affine_stats_init(m);
  for (int i = 0; i < l->n_blocks; i++) {
    const NwDmiBlock *b = &l->blocks[i];
    const size_t n = (size_t)(b->hi[0] - b->lo[0]) * (size_t)(b->hi[1] - b->lo[1]) *
                     (size_t)(b->hi[2] - b->lo[2]);
    nw_affine_stats_add(f, b->fixed, b->fixed_mask, n);
    if (l->strategy == NW_DMI_DISTRIBUTED) {
      int lo[3], hi[3];
      nw_dmi_block_bounds(&l->layout, l->moving_n, b->index, lo, hi);
      window_stats(m, &b->moving, &b->moving_mask, lo, hi);
    }
  }
  if (l->strategy == NW_DMI_REPLICATED && t->rank == 0) {
    const int zero[3] = {0, 0, 0};
    window_stats(m, &l->moving, &l->moving_mask, zero, l->moving_n);
  }
  double sum[4] = {f->sum, f->n, m->sum, m->n}, lo[2] = {f->lo, m->lo}, hi[2] = {f->hi, m->hi};
  if (!t->allreduce_f64(t, sum, 4, NW_DMI_SUM, error) ||
      !t->allreduce_f64(t, lo, 2, NW_DMI_MIN, error) ||
      !t->allreduce_f64(t, hi, 2, NW_DMI_MAX, error))
    return FALSE;
  *f = (NwAffineStats){sum[0], sum[1], lo[0], hi[0]};
  *m = (NwAffineStats){sum[2], sum[3], lo[1], hi[1]};
  return TRUE;
}

static gboolean dmi_evaluate(void *impl, const double map[12], NwAffineSums *sums, GError **error)
{
  DmiCost *c = impl;
  const int len = c->spec.bins * c->spec.bins;
  gint64 requests = 0;
  if (!nw_dmi_ops_histogram(c->ops, c->metric, c->d->t, map, c->spec.bins, c->hist, &requests,
                            error))
    return FALSE;
  if (c->d->counters != NULL) {
    c->d->counters->evaluations++;
    c->d->counters->requests += requests;
  }
  gint64 n = 0;
  for (int b = 0; b < len; b++)
    n += c->hist[b];
  /* only the mass and the histogram: the metric is MI (create refuses the others) */
  *sums = (NwAffineSums){.n = (double)n, .joint = sums->joint};
  nw_dmi_parzen_smooth(c->hist, c->spec.bins, c->spec.parzen, sums->joint);
  return TRUE;
}

const NwAffineCostBackend nw_dmi_cost = {
    .name = "dmi",
    .create = dmi_create,
    .set_level = dmi_set_level,
    .evaluate = dmi_evaluate,
    .destroy = dmi_destroy,
    .level_stats = dmi_level_stats,
};

/* ---- the job ---------------------------------------------------------------------------- */

/* A header (grid only) like v's. */
static NwVolume *header_of(const NwVolume *v)
{
  NwVolume *h = g_new0(NwVolume, 1);
  nw_volume_copy_header(h, v);
  return h;
}

/* The coarsest level's whole image from every rank's blocks (block order is rank order):
 * fixed (which 0), fixed mask (2), moving (1) and moving mask (3) of the distributed
 * strategy; NULL without such an image. */
static NwVolume *gather_coarse(NwDmiTransport *t, const NwDmiLevel *l, const NwVolume *grid,
                               int which, GError **error)
{
  const gboolean moving = which == 1 || which == 3, mask = which >= 2;
  const int *n = moving ? l->moving_n : l->fixed_n;
  GByteArray *mine = g_byte_array_new();
  for (int i = 0; i < l->n_blocks; i++) {
    const NwDmiBlock *b = &l->blocks[i];
    int lo[3], hi[3];
    nw_dmi_block_bounds(&l->layout, n, b->index, lo, hi);
    const NwSampleWindow *w = mask ? &b->moving_mask : &b->moving;
    for (int k = lo[2]; k < hi[2]; k++)
      for (int j = lo[1]; j < hi[1]; j++) {
        const float *row;
        if (moving)
          row = w->data + ((size_t)(k - w->lo[2]) * (size_t)w->n[1] + (size_t)(j - w->lo[1])) *
                              (size_t)w->n[0] +
                (size_t)(lo[0] - w->lo[0]);
        else
          row = (mask ? b->fixed_mask : b->fixed) +
                ((size_t)(k - lo[2]) * (size_t)(hi[1] - lo[1]) + (size_t)(j - lo[1])) *
                    (size_t)(hi[0] - lo[0]);
        g_byte_array_append(mine, (const guint8 *)row, (guint)((hi[0] - lo[0]) * sizeof(float)));
      }
  }
  void *all = NULL;
  gsize len = 0;
  const gboolean ok = t->allgather(t, mine->data, mine->len, &all, &len, NULL, error);
  g_byte_array_unref(mine);
  if (!ok)
    return NULL;
  NwVolume *v = nw_volume_new(n[0], n[1], n[2], 1, error);
  if (v != NULL) {
    nw_volume_set_affine(v, grid->vox_to_ras);
    const float *src = all;
    for (int b = 0; b < nw_dmi_layout_blocks(&l->layout); b++) {
      int lo[3], hi[3];
      nw_dmi_block_bounds(&l->layout, n, b, lo, hi);
      for (int k = lo[2]; k < hi[2]; k++)
        for (int j = lo[1]; j < hi[1]; j++, src += hi[0] - lo[0])
          memcpy(v->data + nw_volume_index(v, lo[0], j, k), src,
                 (size_t)(hi[0] - lo[0]) * sizeof(float));
    }
  }
  g_free(all);
  return v;
}

static gboolean has(const NwDmiSource *s)
{
  return s->read != NULL;
}

NwAffineJob *nw_dmi_job_new(const NwDmiInputs *in, const NwParams *p,
                            const double *initial_transform, GError **error)
{
  NwDmiTransport *t = in->t;
  const int max_levels = nw_params_get_int(p, "levels");
  const int n_levels = MIN(MIN(nw_pyramid_levels(in->fixed_grid, max_levels),
                               nw_pyramid_levels(in->moving_grid, max_levels)),
                           NW_DMI_MAX_LEVELS);
  NwAffineLevels lv = {.dim = in->dim, .n_levels = n_levels};
  lv.fixed = g_new0(NwVolume *, n_levels);
  lv.moving = g_new0(NwVolume *, n_levels);
  lv.fixed[n_levels - 1] = header_of(in->fixed_grid);
  lv.moving[n_levels - 1] = header_of(in->moving_grid);
  for (int l = n_levels - 2; l >= 0; l--) {
    lv.fixed[l] = g_new0(NwVolume, 1);
    lv.moving[l] = g_new0(NwVolume, 1);
    nw_downsample2_header(lv.fixed[l + 1], lv.fixed[l]);
    nw_downsample2_header(lv.moving[l + 1], lv.moving[l]);
  }
  NwDmiCostData *d = g_new0(NwDmiCostData, 1);
  *d = (NwDmiCostData){.t = t,
                       .ops = in->ops,
                       .chunk_voxels = in->chunk_voxels,
                       .cap_mb = in->cap_mb,
                       .n_levels = n_levels,
                       .counters = in->counters};
  NwDmiPyramid pyr[4];
  const NwDmiSource *src[4] = {&in->fixed, &in->moving, &in->fixed_mask, &in->moving_mask};
  for (int i = 0; i < 4; i++)
    if (has(src[i]))
      nw_dmi_pyramid_init(&pyr[i], src[i], n_levels);
  GError *local = NULL;
  gboolean ok = TRUE;
  for (int l = 0; ok && l < n_levels; l++) {
    NwDmiSource s[4];
    memset(s, 0, sizeof s);
    for (int i = 0; i < 4; i++)
      if (has(src[i]))
        s[i] = nw_dmi_pyramid_source(&pyr[i], l);
    d->fixed_grid[l] = lv.fixed[l];
    d->levels[l] = nw_dmi_level_new(in->strategy, &in->layout, t->rank, t->size, &s[0], &s[2],
                                    &s[1], &s[3], &local);
    ok = d->levels[l] != NULL;
  }
  /* a rank that could not read its blocks stops them all, its message first */
  NwVolume *coarse[4] = {NULL, NULL, NULL, NULL};
  if (nw_dmi_agree(t, ok, &local) < 0) {
    const NwDmiLevel *l0 = d->levels[0];
    for (int i = 0; ok && i < 4; i++) {
      if (!has(src[i]))
        continue;
      if ((i == 1 || i == 3) && in->strategy == NW_DMI_REPLICATED)
        coarse[i] = nw_volume_new_like(lv.moving[0], 1, &local);
      else
        coarse[i] = gather_coarse(t, l0, i == 1 || i == 3 ? lv.moving[0] : lv.fixed[0], i, &local);
      ok = coarse[i] != NULL;
      if (ok && (i == 1 || i == 3) && in->strategy == NW_DMI_REPLICATED)
        memcpy(coarse[i]->data, i == 1 ? l0->moving.data : l0->moving_mask.data,
               nw_volume_n_voxels(coarse[i]) * sizeof(float));
    }
  } else {
    ok = FALSE;
  }
  NwAffineJob *j = NULL;
  if (ok) {
    for (int i = 0; i < 4; i++)
      lv.coarse[i] = coarse[i];
    j = nw_affine_job_new_levels(&nw_dmi_cost, d, p, &lv, initial_transform, &local);
  } else {
    for (int l = 0; l < n_levels; l++)
      nw_dmi_level_free(d->levels[l]);
    g_free(d);
    nw_pyramid_free(lv.fixed, n_levels);
    nw_pyramid_free(lv.moving, n_levels);
  }
  for (int i = 0; i < 4; i++)
    nw_volume_free(coarse[i]);
  if (j == NULL)
    g_propagate_error(error, local);
  return j;
}
