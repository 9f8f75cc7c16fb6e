/* dmi_transport.h — the collective communication the distributed mutual-information metric
 * needs (dmi_metric.h), behind function pointers so that core/ stays free of MPI: the MPI
 * transport lives in app/ (cli_mpi.c, NW_HAVE_MPI), and the loopback transport here
 * (dmi_loopback.c) runs R simulated ranks as R threads of one process, for the unit tests and
 * the single-process benchmark. Every call is collective: each rank makes the same calls in
 * the same order. Each rank drives its transport from one thread.
 *
 * Requests (strategy "distributed") are fixed records of NW_DMI_REQUEST_BYTES, so counts are
 * in records (MPI: a contiguous datatype; 2^31 records per pair and chunk at most). */
#ifndef NW_DMI_TRANSPORT_H
#define NW_DMI_TRANSPORT_H

#include <glib.h>

G_BEGIN_DECLS

/* A moving sample that another rank owns: the position (moving voxel coordinates, as the
 * voxel map gives it) and the fixed bin of the fixed voxel it belongs to. The owner samples
 * it, bins it and adds it to its joint histogram: the sum of the ranks' histograms is the
 * same whichever rank adds an entry, so no reply travels back ("aggregated remote updates"). */
typedef struct {
  double x, y, z;
  gint32 fixed_bin;
  gint32 pad; /* zero: the records are 32 bytes */
} NwDmiRequest;
#define NW_DMI_REQUEST_BYTES 32
G_STATIC_ASSERT(sizeof(NwDmiRequest) == NW_DMI_REQUEST_BYTES);

typedef enum { NW_DMI_SUM, NW_DMI_MIN, NW_DMI_MAX } NwDmiOp;

typedef struct NwDmiExchange NwDmiExchange; /* one exchange in flight, the transport's */

typedef struct NwDmiTransport NwDmiTransport;
struct NwDmiTransport {
  const char *name; /* "mpi", "loopback" */
  int rank, size;
  void *impl;
  /* buf[0..n) summed (exact: integers) over the ranks, in place. */
  gboolean (*allreduce_i64)(NwDmiTransport *t, gint64 *buf, int n, GError **error);
  /* buf[0..n) reduced by op over the ranks, in place; a sum adds in rank order (the same
   * result on every rank). */
  gboolean (*allreduce_f64)(NwDmiTransport *t, double *buf, int n, NwDmiOp op, GError **error);
  /* Every rank's bytes, concatenated in rank order into *out (g_malloc'd; *out_len total);
   * lens[r] (size entries, may be NULL) each rank's share. */
  gboolean (*allgather)(NwDmiTransport *t, const void *bytes, gsize len, void **out,
                        gsize *out_len, gsize *lens, GError **error);
  /* Requests to every rank: send holds counts[r] requests for rank r after those for ranks
   * below r. Starts the exchange (counts first, all-to-all, then the records) and returns;
   * send must stay untouched until exchange_wait. */
  gboolean (*exchange_start)(NwDmiTransport *t, const NwDmiRequest *send, const gint64 *counts,
                             NwDmiExchange **x, GError **error);
  /* The requests other ranks sent this one (rank order), borrowed until the next
   * exchange_start of this transport after the wait; ends x. */
  gboolean (*exchange_wait)(NwDmiTransport *t, NwDmiExchange *x, const NwDmiRequest **recv,
                            gint64 *n_recv, GError **error);
};

/* After a step that may fail on some ranks (reading their blocks): collective. Returns -1
 * when every rank's ok is TRUE, else the lowest failing rank; a rank that did not fail gets
 * the error "rank R of N failed" in NW_DMI_PEER_ERROR (its caller prints nothing: rank R
 * says why). */
int nw_dmi_agree(NwDmiTransport *t, gboolean ok, GError **error);
/* The domain of nw_dmi_agree's error for the ranks that did not fail (code 0), so that a
 * caller tells it from a failure of its own without reading the message. */
#define NW_DMI_PEER_ERROR (nw_dmi_peer_error_quark())
GQuark nw_dmi_peer_error_quark(void);

/* ---- the loopback transport (dmi_loopback.c) ------------------------------------------- */

/* Runs fn(transport of rank r, data) on n_ranks threads (rank r on thread r) and waits for
 * them; the transports are valid during fn only. fn's result per rank in ok[r] (may be NULL).
 * Returns TRUE when every rank returned TRUE. */
typedef gboolean (*NwDmiRankFn)(NwDmiTransport *t, gpointer data);
gboolean nw_dmi_loopback_run(int n_ranks, NwDmiRankFn fn, gpointer data, gboolean *ok);

G_END_DECLS

#endif
