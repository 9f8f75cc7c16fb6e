/* cli_mpi.c — see cli_mpi.h. */
#include "cli_mpi.h"

#include <string.h>

#include "nw_error.h"

#ifdef NW_HAVE_MPI
#include <mpi.h>

static gboolean mpi_on; /* MPI_Init was called */

static gboolean under_mpirun(void)
{
  return g_getenv("OMPI_COMM_WORLD_SIZE") != NULL || g_getenv("PMI_SIZE") != NULL ||
         g_getenv("PMIX_RANK") != NULL;
}

gboolean nw_cli_mpi_built(void)
{
  return TRUE;
}

void nw_cli_mpi_init(int *argc, char ***argv, int *rank, int *size)
{
  *rank = 0;
  *size = 1;
  if (!under_mpirun())
    return;
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  mpi_on = TRUE;
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
}

void nw_cli_mpi_finish(void)
{
  if (mpi_on)
    MPI_Finalize();
  mpi_on = FALSE;
}

gboolean nw_cli_mpi_on(void)
{
  return mpi_on;
}

/* ---- the transport over MPI_COMM_WORLD ---------------------------------------------------- */

typedef struct {
  MPI_Datatype request; /* NW_DMI_REQUEST_BYTES contiguous bytes */
  NwDmiExchange *done;  /* the last exchange waited for: its records are borrowed */
} Mpi;

struct NwDmiExchange {
  MPI_Request req;
  NwDmiRequest *recv;
  gint64 n_recv;
  int *counts; /* send counts, send displacements, receive counts and displacements */
};

static gboolean mpi_ok(int status, const char *call, GError **error)
{
  if (status == MPI_SUCCESS)
    return TRUE;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(status, msg, &len);
  g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s failed: %s", call, msg);
  return FALSE;
}

static gboolean mpi_allreduce_i64(NwDmiTransport *t, gint64 *buf, int n, GError **error)
{
  return mpi_ok(MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD),
                "MPI_Allreduce", error);
}

static gboolean mpi_allreduce_f64(NwDmiTransport *t, double *buf, int n, NwDmiOp op,
                                  GError **error)
{
  MPI_Op o = op == NW_DMI_SUM ? MPI_SUM : op == NW_DMI_MIN ? MPI_MIN : MPI_MAX;
  return mpi_ok(MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, o, MPI_COMM_WORLD),
                "MPI_Allreduce", error);
}

static gboolean mpi_allgather(NwDmiTransport *t, const void *bytes, gsize len, void **out,
                              gsize *out_len, gsize *lens, GError **error)
{
  if (len > G_MAXINT) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "MPI_Allgatherv: %zu bytes are too many", len);
    return FALSE;
  }
  g_autofree int *counts = g_new(int, t->size), *displs = g_new(int, t->size);
  int mine = (int)len;
  if (!mpi_ok(MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD),
              "MPI_Allgather", error))
    return FALSE;
  gint64 total = 0;
  for (int r = 0; r < t->size; r++) {
    displs[r] = (int)total;
    total += counts[r];
    if (lens != NULL)
      lens[r] = (gsize)counts[r];
  }
  if (total > G_MAXINT) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "MPI_Allgatherv: %" G_GINT64_FORMAT " bytes are too many", total);
    return FALSE;
  }
  char *all = g_malloc(MAX(total, 1));
  if (!mpi_ok(MPI_Allgatherv(bytes, mine, MPI_BYTE, all, counts, displs, MPI_BYTE, MPI_COMM_WORLD),
              "MPI_Allgatherv", error)) {
    g_free(all);
    return FALSE;
  }
  *out = all;
  *out_len = (gsize)total;
  return TRUE;
}

static void exchange_free(NwDmiExchange *x)
{
  if (x == NULL)
    return;
  g_free(x->recv);
  g_free(x->counts);
  g_free(x);
}

/* Counts (all-to-all, small) first, then the records without waiting (MPI_Ialltoallv):
 * the caller computes the next chunk while they travel. */
static gboolean mpi_exchange_start(NwDmiTransport *t, const NwDmiRequest *send,
                                   const gint64 *counts, NwDmiExchange **out, GError **error)
{
  Mpi *m = t->impl;
  g_clear_pointer(&m->done, exchange_free);
  const int R = t->size;
  g_autofree gint64 *recv_counts = g_new(gint64, R);
  if (!mpi_ok(MPI_Alltoall(counts, 1, MPI_INT64_T, recv_counts, 1, MPI_INT64_T, MPI_COMM_WORLD),
              "MPI_Alltoall", error))
    return FALSE;
  NwDmiExchange *x = g_new0(NwDmiExchange, 1);
  x->counts = g_new(int, 4 * R);
  int *sc = x->counts, *sd = sc + R, *rc = sd + R, *rd = rc + R;
  gint64 s_at = 0, r_at = 0;
  for (int r = 0; r < R; r++) {
    if (counts[r] > G_MAXINT || recv_counts[r] > G_MAXINT || s_at > G_MAXINT || r_at > G_MAXINT) {
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                  "MPI_Ialltoallv: more than 2^31 requests in one chunk (use smaller chunks)");
      exchange_free(x);
      return FALSE;
    }
    sc[r] = (int)counts[r];
    sd[r] = (int)s_at;
    rc[r] = (int)recv_counts[r];
    rd[r] = (int)r_at;
    s_at += counts[r];
    r_at += recv_counts[r];
  }
  x->n_recv = r_at;
  x->recv = g_new(NwDmiRequest, MAX(r_at, 1));
  if (!mpi_ok(MPI_Ialltoallv(send, sc, sd, m->request, x->recv, rc, rd, m->request,
                             MPI_COMM_WORLD, &x->req),
              "MPI_Ialltoallv", error)) {
    exchange_free(x);
    return FALSE;
  }
  *out = x;
  return TRUE;
}

static gboolean mpi_exchange_wait(NwDmiTransport *t, NwDmiExchange *x, const NwDmiRequest **recv,
                                  gint64 *n_recv, GError **error)
{
  Mpi *m = t->impl;
  m->done = x;
  if (!mpi_ok(MPI_Wait(&x->req, MPI_STATUS_IGNORE), "MPI_Wait", error))
    return FALSE;
  *recv = x->recv;
  *n_recv = x->n_recv;
  return TRUE;
}

static NwDmiTransport *transport_new(void)
{
  g_return_val_if_fail(mpi_on, NULL);
  Mpi *m = g_new0(Mpi, 1);
  MPI_Type_contiguous(NW_DMI_REQUEST_BYTES, MPI_BYTE, &m->request);
  MPI_Type_commit(&m->request);
  NwDmiTransport *t = g_new0(NwDmiTransport, 1);
  *t = (NwDmiTransport){.name = "mpi",
                        .impl = m,
                        .allreduce_i64 = mpi_allreduce_i64,
                        .allreduce_f64 = mpi_allreduce_f64,
                        .allgather = mpi_allgather,
                        .exchange_start = mpi_exchange_start,
                        .exchange_wait = mpi_exchange_wait};
  MPI_Comm_rank(MPI_COMM_WORLD, &t->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &t->size);
  return t;
}

static void transport_free(NwDmiTransport *t)
{
  if (t == NULL)
    return;
  Mpi *m = t->impl;
  exchange_free(m->done);
  MPI_Type_free(&m->request);
  g_free(m);
  g_free(t);
}

#else /* without MPI */

gboolean nw_cli_mpi_built(void)
{
  return FALSE;
}

void nw_cli_mpi_init(int *argc, char ***argv, int *rank, int *size)
{
  (void)argc, (void)argv;
  *rank = 0;
  *size = 1;
}

void nw_cli_mpi_finish(void)
{
}

gboolean nw_cli_mpi_on(void)
{
  return FALSE;
}

static NwDmiTransport *transport_new(void)
{
  return NULL;
}

static void transport_free(NwDmiTransport *t)
{
  (void)t;
}

#endif

gboolean nw_cli_mpi_run(int loopback_ranks, NwDmiRankFn fn, gpointer data)
{
  if (!nw_cli_mpi_on())
    return nw_dmi_loopback_run(loopback_ranks, fn, data, NULL);
  NwDmiTransport *t = transport_new();
  const gboolean ok = fn(t, data);
  transport_free(t);
  return ok;
}
