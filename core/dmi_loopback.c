/* dmi_loopback.c — the loopback transport (dmi_transport.h): R simulated ranks as R threads
 * of one process, meeting at a barrier for every collective. Each collective posts the
 * rank's buffer in a shared slot, waits for all, reads every slot in rank order (so
 * reductions are the same on every rank, as the MPI transport's are), and waits again before
 * anyone may reuse its buffer. Used by the unit tests, so that the distributed algorithm runs
 * with several ranks without MPI, and by the single-process benchmark. */
#include <string.h>

#include "dmi_transport.h"
#include "nw_error.h"

typedef struct {
  int n;
  GMutex lock;
  GCond cond;
  int arrived;
  guint64 generation;
  const void **ptr; /* per rank: its posted buffer */
  gsize *len;       /* per rank: its length (bytes, records or values) */
  const gint64 **counts;
} World;

struct NwDmiExchange {
  NwDmiRequest *recv;
  gint64 n_recv;
};

typedef struct {
  World *w;
  NwDmiTransport t;
  NwDmiExchange *done; /* the last exchange waited for: its records are borrowed until the next */
  NwDmiRankFn fn;
  gpointer data;
  gboolean ok;
} Rank;

static void barrier(World *w)
{
  g_mutex_lock(&w->lock);
  const guint64 gen = w->generation;
  if (++w->arrived == w->n) {
    w->arrived = 0;
    w->generation++;
    g_cond_broadcast(&w->cond);
  } else {
    while (gen == w->generation)
      g_cond_wait(&w->cond, &w->lock);
  }
  g_mutex_unlock(&w->lock);
}

static World *world_of(NwDmiTransport *t)
{
  return ((Rank *)t->impl)->w;
}

static gboolean lb_allreduce_i64(NwDmiTransport *t, gint64 *buf, int n, GError **error)
{
  World *w = world_of(t);
  w->ptr[t->rank] = buf;
  barrier(w);
  gint64 *sum = g_new0(gint64, MAX(n, 1));
  for (int r = 0; r < w->n; r++)
    for (int i = 0; i < n; i++)
      sum[i] += ((const gint64 *)w->ptr[r])[i];
  barrier(w); /* every rank has read every buffer */
  memcpy(buf, sum, (gsize)n * sizeof *buf);
  g_free(sum);
  return TRUE;
}

static gboolean lb_allreduce_f64(NwDmiTransport *t, double *buf, int n, NwDmiOp op, GError **error)
{
  World *w = world_of(t);
  w->ptr[t->rank] = buf;
  barrier(w);
  double *acc = g_new(double, MAX(n, 1));
  memcpy(acc, w->ptr[0], (gsize)n * sizeof *acc);
  for (int r = 1; r < w->n; r++)
    for (int i = 0; i < n; i++) {
      const double v = ((const double *)w->ptr[r])[i];
      acc[i] = op == NW_DMI_SUM ? acc[i] + v : op == NW_DMI_MIN ? MIN(acc[i], v) : MAX(acc[i], v);
    }
  barrier(w);
  memcpy(buf, acc, (gsize)n * sizeof *buf);
  g_free(acc);
  return TRUE;
}

static gboolean lb_allgather(NwDmiTransport *t, const void *bytes, gsize len, void **out,
                             gsize *out_len, gsize *lens, GError **error)
{
  World *w = world_of(t);
  w->ptr[t->rank] = bytes;
  w->len[t->rank] = len;
  barrier(w);
  gsize total = 0;
  for (int r = 0; r < w->n; r++)
    total += w->len[r];
  char *all = g_malloc(MAX(total, 1));
  gsize off = 0;
  for (int r = 0; r < w->n; r++) {
    if (w->len[r] > 0)
      memcpy(all + off, w->ptr[r], w->len[r]);
    off += w->len[r];
    if (lens != NULL)
      lens[r] = w->len[r];
  }
  barrier(w);
  *out = all;
  *out_len = total;
  return TRUE;
}

static gboolean lb_exchange_start(NwDmiTransport *t, const NwDmiRequest *send, const gint64 *counts,
                                  NwDmiExchange **x, GError **error)
{
  Rank *me = t->impl;
  World *w = me->w;
  if (me->done != NULL) {
    g_free(me->done->recv);
    g_clear_pointer(&me->done, g_free);
  }
  w->ptr[t->rank] = send;
  w->counts[t->rank] = counts;
  barrier(w);
  NwDmiExchange *e = g_new0(NwDmiExchange, 1);
  for (int r = 0; r < w->n; r++)
    e->n_recv += w->counts[r][t->rank];
  e->recv = g_new(NwDmiRequest, MAX(e->n_recv, 1));
  gint64 at = 0;
  for (int r = 0; r < w->n; r++) {
    gint64 first = 0; /* rank r's records for ranks below this one come first */
    for (int d = 0; d < t->rank; d++)
      first += w->counts[r][d];
    const gint64 n = w->counts[r][t->rank];
    if (n > 0)
      memcpy(e->recv + at, (const NwDmiRequest *)w->ptr[r] + first, (gsize)n * sizeof *e->recv);
    at += n;
  }
  barrier(w);
  *x = e;
  return TRUE;
}

static gboolean lb_exchange_wait(NwDmiTransport *t, NwDmiExchange *x, const NwDmiRequest **recv,
                                 gint64 *n_recv, GError **error)
{
  Rank *me = t->impl;
  me->done = x;
  *recv = x->recv;
  *n_recv = x->n_recv;
  return TRUE;
}

static gpointer rank_thread(gpointer data)
{
  Rank *me = data;
  me->ok = me->fn(&me->t, me->data);
  if (me->done != NULL) {
    g_free(me->done->recv);
    g_clear_pointer(&me->done, g_free);
  }
  return NULL;
}

gboolean nw_dmi_loopback_run(int n_ranks, NwDmiRankFn fn, gpointer data, gboolean *ok)
{
  g_return_val_if_fail(n_ranks >= 1, FALSE);
  World w = {.n = n_ranks};
  g_mutex_init(&w.lock);
  g_cond_init(&w.cond);
  w.ptr = g_new0(const void *, n_ranks);
  w.len = g_new0(gsize, n_ranks);
  w.counts = g_new0(const gint64 *, n_ranks);
  Rank *ranks = g_new0(Rank, n_ranks);
  GThread **threads = g_new0(GThread *, n_ranks);
  for (int r = 0; r < n_ranks; r++) {
    ranks[r] = (Rank){.w = &w, .fn = fn, .data = data};
    ranks[r].t = (NwDmiTransport){.name = "loopback",
                                  .rank = r,
                                  .size = n_ranks,
                                  .impl = &ranks[r],
                                  .allreduce_i64 = lb_allreduce_i64,
                                  .allreduce_f64 = lb_allreduce_f64,
                                  .allgather = lb_allgather,
                                  .exchange_start = lb_exchange_start,
                                  .exchange_wait = lb_exchange_wait};
  }
  for (int r = 0; r < n_ranks; r++)
    threads[r] = g_thread_new("dmi-rank", rank_thread, &ranks[r]);
  gboolean all = TRUE;
  for (int r = 0; r < n_ranks; r++) {
    g_thread_join(threads[r]);
    all = all && ranks[r].ok;
    if (ok != NULL)
      ok[r] = ranks[r].ok;
  }
  g_free(threads);
  g_free(ranks);
  g_free(w.ptr);
  g_free(w.len);
  g_free(w.counts);
  g_mutex_clear(&w.lock);
  g_cond_clear(&w.cond);
  return all;
}
