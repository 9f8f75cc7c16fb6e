/* cli_batch.h — the parts of `neurowarp-cli batch` (cli_batch.c: the command, its worker
 * threads and progress; cli_batch_table.c: what a pair's stages left on disk and the
 * summary table; cli_batch_share.c: which pairs this process takes, and with MPI the
 * merge on rank 0). The figures of a pair are always read from the summary JSON its stages
 * wrote (PREFIX_summary.json of the single commands), whether the pair ran now or was
 * complete before: one source for a table that a resumed run rebuilds. */
#ifndef NW_CLI_BATCH_H
#define NW_CLI_BATCH_H

#include <glib.h>

#include "cli_batch_list.h"
#include "cli_deformable.h"

G_BEGIN_DECLS

/* One stage of the chain: a command run on each pair with PREFIX = DIR/ID/METHOD. */
typedef struct {
  const char *method;                 /* "affine", "demons", "fluid" */
  const NwCliDeformable *deformable;  /* demons, fluid; NULL for affine */
  const char *metric;                 /* figure of the summary's "final" for the table; NULL:
                                         the affine summary's "metric_value" */
} NwBatchStage;

typedef enum {
  NW_BATCH_PENDING,  /* not run (yet): another rank's, or the batch was stopped first */
  NW_BATCH_DONE,     /* registered by this run (a stage at least) */
  NW_BATCH_SKIPPED,  /* every stage complete before: "skipped-complete" */
  NW_BATCH_FAILED,   /* a stage failed: error */
  NW_BATCH_CANCELLED /* Ctrl-C while it ran: nothing of the running stage was left */
} NwBatchStatus;

const char *nw_batch_status_name(NwBatchStatus s);

typedef struct {
  NwBatchStatus status;
  gboolean loaded; /* the figures below were read (nw_batch_result_load) */
  char *error;   /* FAILED, CANCELLED: the message; else NULL */
  double wall_s; /* this run's time on the pair, skips included */
  /* Figures of the stages' summaries (nw_batch_result_load), summed over stages; the metric
   * and Dice of the last stage that has them. NAN when not known. */
  double time_s[5]; /* read, device_init, register, write, total */
  int iterations;
  char *metric;
  double metric_value, mean_dice;
} NwBatchResult;

/* A pair not run yet: PENDING, figures NAN. */
void nw_batch_result_init(NwBatchResult *r);
void nw_batch_result_clear(NwBatchResult *r);

/* DIR/ID/METHOD: the stage's prefix; its summary is PREFIX_summary.json. */
char *nw_batch_prefix(const char *dir, const NwBatchRow *row, const NwBatchStage *stage);

/* Is the stage of row complete in dir: its summary exists, is JSON that names the same
 * fixed and moving images and the same parameters (params: the NwParams the stage runs
 * with, as nw_json_add_params writes them), and every output it lists exists. Any thread. */
gboolean nw_batch_stage_complete(const char *dir, const NwBatchRow *row, const NwBatchStage *stage,
                                 const char *fixed, const char *moving, JsonNode *params);

/* The figures of r from the summaries of the stages that have one. */
void nw_batch_result_load(NwBatchResult *r, const char *dir, const NwBatchRow *row,
                          const NwBatchStage *stages, int n_stages);

/* What the table says about the whole batch. */
typedef struct {
  const char *list, *dir, *method, *device;
  int jobs, ranks;
  double wall_s; /* this run, from the start to the last pair */
} NwBatchInfo;

/* DIR/batch_summary.csv and DIR/batch_summary.json, each atomically: one row per pair (in
 * the list's order) and, in the JSON, the totals with pairs per minute. */
gboolean nw_batch_table_write(const NwBatchInfo *info, GPtrArray *rows,
                              const NwBatchResult *results, GError **error);
/* One pair's row as a JSON object on one line (the --json line of a finished pair, with
 * "pair":true), and the totals object of the table (the closing --json line, with
 * "summary":true). Free with g_free. */
char *nw_batch_row_json_line(const NwBatchRow *row, const NwBatchResult *r);
char *nw_batch_totals_json_line(const NwBatchInfo *info, const NwBatchResult *results, guint n);

/* ---- which pairs this process takes (cli_batch_share.c) ------------------------------- */

/* The workers of a batch: size processes (MPI ranks; 1 without MPI), this one is rank. Rank
 * r of R takes pairs i with i % R == r: interleaved, so that a list sorted by subject
 * spreads every subject's sizes over the ranks. */
typedef struct {
  int rank, size;
} NwBatchShare;

/* With MPI (NW_HAVE_MPI) and launched by mpirun: MPI_Init and the rank and size; else rank
 * 0 of 1. Call once, before threads. */
void nw_batch_share_init(NwBatchShare *s, int *argc, char ***argv);
gboolean nw_batch_share_takes(const NwBatchShare *s, guint index);
/* After every rank's pairs: rank 0 gets the status, error and time of every other rank's
 * pairs into results (the figures it then reads from disk); every rank gets the maximum of
 * *worst over ranks (the exit status). Without MPI a no-op. */
void nw_batch_share_merge(const NwBatchShare *s, NwBatchResult *results, guint n, int *worst);
void nw_batch_share_finish(const NwBatchShare *s);

G_END_DECLS

#endif
