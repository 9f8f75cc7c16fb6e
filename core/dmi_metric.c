/* dmi_metric.c — see dmi_metric.h: a rank's blocks of a level, and its joint histogram in
 * both strategies, in plain loops (the reference of cuda/dmi_cuda.cu). The rank's thread. */
#include "dmi_metric.h"

#include <math.h>
#include <string.h>

#include "affine_cost.h"
#include "nw_error.h"

const char *nw_dmi_strategy_name(NwDmiStrategy s)
{
  return s == NW_DMI_DISTRIBUTED ? "distributed" : "replicated";
}

gboolean nw_dmi_strategy_parse(const char *text, NwDmiStrategy *out, GError **error)
{
  if (g_strcmp0(text, "replicated") == 0 || g_strcmp0(text, "distributed") == 0) {
    *out = g_str_equal(text, "distributed") ? NW_DMI_DISTRIBUTED : NW_DMI_REPLICATED;
    return TRUE;
  }
  g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
              "--strategy '%s': expected replicated or distributed", text != NULL ? text : "");
  return FALSE;
}

/* ---- sources and levels ----------------------------------------------------------------- */

static gboolean read_volume_region(gpointer data, const int lo[3], const int hi[3], float *out,
                                   GError **error)
{
  nw_volume_copy_region(data, lo, hi, out);
  return TRUE;
}

NwDmiSource nw_dmi_source_volume(const NwVolume *v)
{
  return (NwDmiSource){{v->nx, v->ny, v->nz}, read_volume_region, (gpointer)v};
}

static gsize region_voxels(const int lo[3], const int hi[3])
{
  return (gsize)(hi[0] - lo[0]) * (gsize)(hi[1] - lo[1]) * (gsize)(hi[2] - lo[2]);
}

/* The region [lo, hi) of src into a new buffer (NULL and an error when the read fails). */
static float *read_region(const NwDmiSource *src, const int lo[3], const int hi[3], GError **error)
{
  float *buf = g_try_new(float, MAX(region_voxels(lo, hi), 1));
  if (buf == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_NOMEM, "no memory for a block of %d x %d x %d voxels",
                hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
    return NULL;
  }
  if (region_voxels(lo, hi) > 0 && !src->read(src->data, lo, hi, buf, error))
    g_clear_pointer(&buf, g_free);
  return buf;
}

/* A window of src over [lo, hi) (lo, hi within the image). */
static gboolean read_window(const NwDmiSource *src, const int lo[3], const int hi[3],
                            NwSampleWindow *w, GError **error)
{
  float *d = read_region(src, lo, hi, error);
  if (d == NULL)
    return FALSE;
  *w = (NwSampleWindow){d, {lo[0], lo[1], lo[2]}, {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]},
                        {src->n[0], src->n[1], src->n[2]}};
  return TRUE;
}

static gboolean has(const NwDmiSource *s)
{
  return s != NULL && s->read != NULL;
}

static gboolean read_block(NwDmiLevel *l, NwDmiBlock *b, const NwDmiSource *fixed,
                           const NwDmiSource *fixed_mask, const NwDmiSource *moving,
                           const NwDmiSource *moving_mask, GError **error)
{
  nw_dmi_block_bounds(&l->layout, l->fixed_n, b->index, b->lo, b->hi);
  if ((b->fixed = read_region(fixed, b->lo, b->hi, error)) == NULL ||
      (has(fixed_mask) && (b->fixed_mask = read_region(fixed_mask, b->lo, b->hi, error)) == NULL))
    return FALSE;
  if (l->strategy != NW_DMI_DISTRIBUTED)
    return TRUE;
  int lo[3], hi[3];
  nw_dmi_block_bounds(&l->layout, l->moving_n, b->index, lo, hi);
  for (int a = 0; a < 3; a++) {
    lo[a] = MAX(0, lo[a] - NW_DMI_HALO);
    hi[a] = MIN(l->moving_n[a], hi[a] + NW_DMI_HALO);
  }
  return read_window(moving, lo, hi, &b->moving, error) &&
         (!has(moving_mask) || read_window(moving_mask, lo, hi, &b->moving_mask, error));
}

NwDmiLevel *nw_dmi_level_new(NwDmiStrategy strategy, const NwDmiLayout *layout, int rank,
                             int n_ranks, const NwDmiSource *fixed, const NwDmiSource *fixed_mask,
                             const NwDmiSource *moving, const NwDmiSource *moving_mask,
                             GError **error)
{
  NwDmiLevel *l = g_new0(NwDmiLevel, 1);
  l->strategy = strategy;
  l->layout = *layout;
  l->n_ranks = n_ranks;
  memcpy(l->fixed_n, fixed->n, sizeof l->fixed_n);
  memcpy(l->moving_n, moving->n, sizeof l->moving_n);
  nw_dmi_rank_blocks(rank, nw_dmi_layout_blocks(layout), n_ranks, &l->first_block, &l->n_blocks);
  l->blocks = g_new0(NwDmiBlock, MAX(l->n_blocks, 1));
  gboolean ok = TRUE;
  for (int i = 0; ok && i < l->n_blocks; i++) {
    l->blocks[i].index = l->first_block + i;
    ok = read_block(l, &l->blocks[i], fixed, fixed_mask, moving, moving_mask, error);
  }
  if (ok && strategy == NW_DMI_REPLICATED) {
    const int zero[3] = {0, 0, 0};
    ok = read_window(moving, zero, moving->n, &l->moving, error) &&
         (!has(moving_mask) || read_window(moving_mask, zero, moving->n, &l->moving_mask, error));
    l->moving_owned = (float *)l->moving.data;
    l->moving_mask_owned = (float *)l->moving_mask.data;
  }
  if (!ok)
    g_clear_pointer(&l, nw_dmi_level_free);
  return l;
}

void nw_dmi_level_free(NwDmiLevel *l)
{
  if (l == NULL)
    return;
  for (int i = 0; i < l->n_blocks; i++) {
    g_free(l->blocks[i].fixed);
    g_free(l->blocks[i].fixed_mask);
    g_free((float *)l->blocks[i].moving.data);
    g_free((float *)l->blocks[i].moving_mask.data);
  }
  g_free(l->blocks);
  g_free(l->moving_owned);
  g_free(l->moving_mask_owned);
  g_free(l);
}

gint64 nw_dmi_level_fixed_voxels(const NwDmiLevel *l)
{
  gint64 n = 0;
  for (int i = 0; i < l->n_blocks; i++)
    n += (gint64)region_voxels(l->blocks[i].lo, l->blocks[i].hi);
  return n;
}

/* ---- the metric ------------------------------------------------------------------------- */

struct NwDmiMetric {
  NwDmiSpec spec;
  NwDmiTransport *t;
  const NwDmiLevel *level;
  double fixed_lo, fixed_hi, moving_lo, moving_hi;
  int *owner[3]; /* moving voxel -> block coordinate per axis (distributed) */
  int n_chunks;  /* agreed by the ranks at set_level */
  GArray **to;   /* per rank: the chunk's requests for it */
  NwDmiRequest *send[2];
  gsize send_cap[2];
  gint64 *counts[2];
  gint64 last_requests;
};

NwDmiMetric *nw_dmi_metric_new(const NwDmiSpec *spec, NwDmiTransport *t)
{
  NwDmiMetric *m = g_new0(NwDmiMetric, 1);
  m->spec = *spec;
  if (m->spec.chunk_voxels < 1)
    m->spec.chunk_voxels = (gint64)1 << 20;
  m->t = t;
  m->to = g_new0(GArray *, t->size);
  for (int r = 0; r < t->size; r++)
    m->to[r] = g_array_new(FALSE, FALSE, sizeof(NwDmiRequest));
  for (int i = 0; i < 2; i++)
    m->counts[i] = g_new0(gint64, t->size);
  return m;
}

void nw_dmi_metric_free(NwDmiMetric *m)
{
  if (m == NULL)
    return;
  for (int r = 0; r < m->t->size; r++)
    g_array_unref(m->to[r]);
  g_free(m->to);
  for (int i = 0; i < 2; i++) {
    g_free(m->send[i]);
    g_free(m->counts[i]);
  }
  g_free(m->owner[0]);
  g_free(m);
}

gboolean nw_dmi_metric_set_level(NwDmiMetric *m, const NwDmiLevel *level, double fixed_lo,
                                 double fixed_hi, double moving_lo, double moving_hi,
                                 GError **error)
{
  m->level = level;
  m->fixed_lo = fixed_lo;
  m->fixed_hi = fixed_hi;
  m->moving_lo = moving_lo;
  m->moving_hi = moving_hi;
  g_clear_pointer(&m->owner[0], g_free);
  m->n_chunks = 1;
  if (level->strategy != NW_DMI_DISTRIBUTED)
    return TRUE;
  nw_dmi_owner_tables(&level->layout, level->moving_n, m->owner);
  /* every rank makes the same number of exchanges: the most chunks any rank needs */
  double chunks = (double)MAX(1, (nw_dmi_level_fixed_voxels(level) + m->spec.chunk_voxels - 1) /
                                     m->spec.chunk_voxels);
  if (!m->t->allreduce_f64(m->t, &chunks, 1, NW_DMI_MAX, error))
    return FALSE;
  m->n_chunks = (int)chunks;
  return TRUE;
}

static inline gboolean in_domain(double x, int n)
{
  return x >= -0.5 && x <= (double)n - 0.5;
}

static inline int nearest(double x, int n)
{
  const int i = (int)floor(x + 0.5);
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

/* Adds the sample at (x, y, z) of window w (mask: data NULL for none) with fixed bin fb. */
static inline void add_sample(const NwDmiMetric *m, gint64 *hist, const NwSampleWindow *w,
                              const NwSampleWindow *mask, double x, double y, double z, int fb)
{
  float mv, mk;
  if (!nw_sampler_sample_window(w, m->spec.sampler, x, y, z, &mv))
    return;
  if (mask->data != NULL &&
      !(nw_sampler_sample_window(mask, NW_SAMPLER_NEAREST, x, y, z, &mk) && mk >= 0.5f))
    return;
  const int bins = m->spec.bins;
  hist[fb * bins + nw_affine_bin(mv, m->moving_lo, m->moving_hi, bins)]++;
}

/* The block of the layout that owns moving position (x, y, z) (inside the domain). */
static inline int owner_block(const NwDmiMetric *m, double x, double y, double z)
{
  const NwDmiLevel *l = m->level;
  const int qx = m->owner[0][nearest(x, l->moving_n[0])];
  const int qy = m->owner[1][nearest(y, l->moving_n[1])];
  const int qz = m->owner[2][nearest(z, l->moving_n[2])];
  return (qz * l->layout.m[1] + qy) * l->layout.m[0] + qx;
}

/* Chunk c of n of every local block: samples this rank owns into hist, the others appended
 * to m->to[owner rank]. */
static void walk_chunk(NwDmiMetric *m, const double map[12], int c, int n, gint64 *hist)
{
  const NwDmiLevel *l = m->level;
  const gboolean dist = l->strategy == NW_DMI_DISTRIBUTED;
  const int n_blocks = nw_dmi_layout_blocks(&l->layout), bins = m->spec.bins;
  for (int bi = 0; bi < l->n_blocks; bi++) {
    const NwDmiBlock *b = &l->blocks[bi];
    const gint64 wx = b->hi[0] - b->lo[0], wy = b->hi[1] - b->lo[1];
    const gint64 nv = (gint64)region_voxels(b->lo, b->hi);
    const gint64 e0 = nv * c / n, e1 = nv * (c + 1) / n;
    for (gint64 e = e0; e < e1; e++) {
      if (b->fixed_mask != NULL && !(b->fixed_mask[e] >= 0.5f))
        continue;
      /* global voxel (i, j, k), as the single-process cost computes the position */
      const int i = b->lo[0] + (int)(e % wx);
      const double j = (double)(b->lo[1] + (int)((e / wx) % wy));
      const double k = (double)(b->lo[2] + (int)(e / (wx * wy)));
      const double x = map[0] * i + map[1] * j + map[2] * k + map[3];
      const double y = map[4] * i + map[5] * j + map[6] * k + map[7];
      const double z = map[8] * i + map[9] * j + map[10] * k + map[11];
      if (!in_domain(x, l->moving_n[0]) || !in_domain(y, l->moving_n[1]) ||
          !in_domain(z, l->moving_n[2]))
        continue;
      const int fb = nw_affine_bin(b->fixed[e], m->fixed_lo, m->fixed_hi, bins);
      if (!dist) {
        add_sample(m, hist, &l->moving, &l->moving_mask, x, y, z, fb);
        continue;
      }
      const int ob = owner_block(m, x, y, z);
      const int orank = nw_dmi_block_rank(ob, n_blocks, l->n_ranks);
      if (orank == m->t->rank) {
        const NwDmiBlock *o = &l->blocks[ob - l->first_block];
        add_sample(m, hist, &o->moving, &o->moving_mask, x, y, z, fb);
      } else {
        const NwDmiRequest rq = {x, y, z, fb, 0};
        g_array_append_val(m->to[orank], rq);
      }
    }
  }
}

/* Packs the per-rank lists into send buffer s (rank order) with their counts. */
static void pack(NwDmiMetric *m, int s)
{
  gsize total = 0;
  for (int r = 0; r < m->t->size; r++)
    total += m->to[r]->len;
  if (total > m->send_cap[s]) {
    g_free(m->send[s]);
    m->send[s] = g_new(NwDmiRequest, total);
    m->send_cap[s] = total;
  }
  gsize at = 0;
  for (int r = 0; r < m->t->size; r++) {
    const gsize n = m->to[r]->len;
    if (n > 0)
      memcpy(m->send[s] + at, m->to[r]->data, n * sizeof(NwDmiRequest));
    m->counts[s][r] = (gint64)n;
    m->last_requests += (gint64)n;
    at += n;
    g_array_set_size(m->to[r], 0);
  }
}

/* Requests other ranks sent: each sampled in the local block that owns it. */
static void serve(NwDmiMetric *m, const NwDmiRequest *rq, gint64 n, gint64 *hist)
{
  const NwDmiLevel *l = m->level;
  for (gint64 q = 0; q < n; q++) {
    const int ob = owner_block(m, rq[q].x, rq[q].y, rq[q].z) - l->first_block;
    if (ob < 0 || ob >= l->n_blocks) {
      g_warning("dmi: rank %d was sent a sample of block %d, not its own", m->t->rank,
                ob + l->first_block);
      continue;
    }
    const NwDmiBlock *o = &l->blocks[ob];
    add_sample(m, hist, &o->moving, &o->moving_mask, rq[q].x, rq[q].y, rq[q].z,
               rq[q].fixed_bin);
  }
}

gboolean nw_dmi_metric_local(NwDmiMetric *m, const double map[12], gint64 *hist, GError **error)
{
  g_return_val_if_fail(m->level != NULL, FALSE);
  memset(hist, 0, (size_t)m->spec.bins * (size_t)m->spec.bins * sizeof *hist);
  m->last_requests = 0;
  if (m->level->strategy != NW_DMI_DISTRIBUTED) {
    walk_chunk(m, map, 0, 1, hist);
    return TRUE;
  }
  /* chunk c is computed while chunk c - 1's requests travel; its buffer is the one of
   * chunk c - 2, whose exchange has ended */
  NwDmiExchange *inflight = NULL;
  for (int c = 0; c < m->n_chunks; c++) {
    walk_chunk(m, map, c, m->n_chunks, hist);
    pack(m, c % 2);
    if (inflight != NULL) {
      const NwDmiRequest *rq;
      gint64 n;
      if (!m->t->exchange_wait(m->t, inflight, &rq, &n, error))
        return FALSE;
      serve(m, rq, n, hist);
    }
    if (!m->t->exchange_start(m->t, m->send[c % 2], m->counts[c % 2], &inflight, error))
      return FALSE;
  }
  const NwDmiRequest *rq;
  gint64 n;
  if (!m->t->exchange_wait(m->t, inflight, &rq, &n, error))
    return FALSE;
  serve(m, rq, n, hist);
  return TRUE;
}

gboolean nw_dmi_metric_histogram(NwDmiMetric *m, const double map[12], gint64 *hist,
                                 GError **error)
{
  return nw_dmi_metric_local(m, map, hist, error) &&
         m->t->allreduce_i64(m->t, hist, m->spec.bins * m->spec.bins, error);
}

gint64 nw_dmi_metric_last_requests(const NwDmiMetric *m)
{
  return m->last_requests;
}

void nw_dmi_parzen_smooth(const gint64 *hist, int bins, gboolean parzen, double *out)
{
  const gsize len = (gsize)bins * (gsize)bins;
  if (!parzen) {
    for (gsize b = 0; b < len; b++)
      out[b] = (double)hist[b];
    return;
  }
  memset(out, 0, len * sizeof *out);
  for (int f = 0; f < bins; f++)
    for (int b = 0; b < bins; b++) {
      const double v = (double)hist[f * bins + b];
      if (v == 0.0)
        continue;
      double *row = out + (gsize)f * (gsize)bins;
      row[b] += v * (4.0 / 6.0);
      row[MAX(b - 1, 0)] += v / 6.0;
      row[MIN(b + 1, bins - 1)] += v / 6.0;
    }
}

G_DEFINE_QUARK(nw-dmi-peer-error-quark, nw_dmi_peer_error)

int nw_dmi_agree(NwDmiTransport *t, gboolean ok, GError **error)
{
  double first = ok ? (double)t->size : (double)t->rank;
  GError *local = NULL;
  if (!t->allreduce_f64(t, &first, 1, NW_DMI_MIN, &local)) {
    if (ok)
      g_propagate_error(error, local);
    else
      g_error_free(local);
    return t->rank;
  }
  if ((int)first < t->size && ok)
    g_set_error(error, NW_DMI_PEER_ERROR, 0, "rank %d of %d failed", (int)first, t->size);
  return (int)first < t->size ? (int)first : -1;
}

/* ---- the table ---------------------------------------------------------------------------- */

static void *ops_create(const NwDmiSpec *spec, NwDmiTransport *t, GError **error)
{
  return nw_dmi_metric_new(spec, t);
}

static gboolean ops_set_level(void *impl, const NwDmiLevel *level, const double r[4],
                              GError **error)
{
  return nw_dmi_metric_set_level(impl, level, r[0], r[1], r[2], r[3], error);
}

static gboolean ops_local(void *impl, const double map[12], gint64 *hist, gint64 *requests,
                          GError **error)
{
  if (!nw_dmi_metric_local(impl, map, hist, error))
    return FALSE;
  *requests = nw_dmi_metric_last_requests(impl);
  return TRUE;
}

static void ops_destroy(void *impl)
{
  nw_dmi_metric_free(impl);
}

const NwDmiMetricOps nw_dmi_metric_cpu_ops = {
    .name = "cpu",
    .create = ops_create,
    .set_level = ops_set_level,
    .local = ops_local,
    .reduce = NULL,
    .destroy = ops_destroy,
};

gboolean nw_dmi_ops_histogram(const NwDmiMetricOps *ops, void *impl, NwDmiTransport *t,
                              const double map[12], int bins, gint64 *hist, gint64 *requests,
                              GError **error)
{
  const int len = bins * bins;
  return ops->local(impl, map, hist, requests, error) &&
         (ops->reduce != NULL ? ops->reduce(impl, hist, len, error)
                              : t->allreduce_i64(t, hist, len, error));
}
