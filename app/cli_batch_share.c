/* cli_batch_share.c — which pairs of a batch this process takes, and with MPI (NW_HAVE_MPI,
 * launched by mpirun) the merge of every rank's statuses on rank 0 (cli_batch.h). Main
 * thread only: MPI is initialised for FUNNELED use and the workers never call it. */
#include <stdlib.h>
#include <string.h>

#include "cli_batch.h"

#include "cli_mpi.h"
#ifdef NW_HAVE_MPI
#include <mpi.h>
#endif

void nw_batch_share_init(NwBatchShare *s, int *argc, char ***argv)
{
  nw_cli_mpi_init(argc, argv, &s->rank, &s->size);
}

gboolean nw_batch_share_takes(const NwBatchShare *s, guint index)
{
  return (int)(index % (guint)s->size) == s->rank;
}

#ifdef NW_HAVE_MPI
/* This rank's pairs as lines "index<TAB>status<TAB>wall_s<TAB>error" (error without tabs
 * and newlines). */
static char *pack(const NwBatchShare *s, const NwBatchResult *results, guint n)
{
  GString *t = g_string_new(NULL);
  for (guint i = 0; i < n; i++) {
    if (!nw_batch_share_takes(s, i))
      continue;
    g_autofree char *e = g_strdup(results[i].error != NULL ? results[i].error : "");
    g_strdelimit(e, "\t\r\n", ' ');
    g_string_append_printf(t, "%u\t%d\t%.17g\t%s\n", i, (int)results[i].status, results[i].wall_s,
                           e);
  }
  return g_string_free(t, FALSE);
}

static void unpack(const char *text, NwBatchResult *results, guint n)
{
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (int l = 0; lines[l] != NULL; l++) {
    g_auto(GStrv) f = g_strsplit(lines[l], "\t", 4);
    if (g_strv_length(f) != 4)
      continue;
    const guint i = (guint)strtoul(f[0], NULL, 10);
    if (i >= n)
      continue;
    NwBatchResult *r = &results[i];
    r->status = (NwBatchStatus)atoi(f[1]);
    r->wall_s = g_ascii_strtod(f[2], NULL);
    g_free(r->error);
    r->error = f[3][0] != '\0' ? g_strdup(f[3]) : NULL;
  }
}
#endif

void nw_batch_share_merge(const NwBatchShare *s, NwBatchResult *results, guint n, int *worst)
{
#ifdef NW_HAVE_MPI
  if (!nw_cli_mpi_on() || s->size == 1)
    return;
  g_autofree char *mine = pack(s, results, n);
  int len = (int)strlen(mine) + 1;
  g_autofree int *lens = s->rank == 0 ? g_new0(int, s->size) : NULL;
  g_autofree int *offsets = s->rank == 0 ? g_new0(int, s->size) : NULL;
  MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
  g_autofree char *all = NULL;
  if (s->rank == 0) {
    int total = 0;
    for (int r = 0; r < s->size; r++) {
      offsets[r] = total;
      total += lens[r];
    }
    all = g_malloc(total);
  }
  MPI_Gatherv(mine, len, MPI_CHAR, all, lens, offsets, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (s->rank == 0)
    for (int r = 1; r < s->size; r++)
      unpack(all + offsets[r], results, n);
  int w = *worst;
  MPI_Allreduce(&w, worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#else
  (void)s, (void)results, (void)n, (void)worst;
#endif
}

void nw_batch_share_finish(const NwBatchShare *s)
{
  (void)s;
  nw_cli_mpi_finish();
}
