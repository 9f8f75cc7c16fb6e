/* cli_affine_private.h — what `neurowarp-cli affine` (cli_affine.c) shares with its
 * --distributed run (cli_affine_dist.c): the command's arguments, the summary file's JSON,
 * and the distributed run itself. Main thread. */
#ifndef NW_CLI_AFFINE_PRIVATE_H
#define NW_CLI_AFFINE_PRIVATE_H

#include "cli_common.h"

G_BEGIN_DECLS

typedef struct {
  const char *fixed, *moving, *fixed_mask, *moving_mask, *initial, *prefix;
  gboolean ignore_spacing;
  gint64 t_start; /* the command's start (g_get_monotonic_time), for the total time */
} AffineArgs;

/* Adds members of its own to a summary before it closes. */
typedef void (*NwCliJsonExtra)(JsonBuilder *b, gpointer data);
/* PREFIX_summary.json's text: the command, inputs, parameters, the transform, the cost and
 * evaluations, extra's members (may be NULL), the level log, the times and the outputs. */
char *nw_cli_affine_summary(const AffineArgs *a, NwCliMethod *m, const NwCliRunLog *run,
                            const NwCliTimes *times, const NwMethodResult *res, int dim,
                            const char *const *outputs, NwCliJsonExtra extra, gpointer data);

typedef struct {
  gboolean on;
  char *strategy, *blocks; /* NULL: replicated; chosen */
  double cap_mb;           /* 0: no cap */
} NwCliDistOptions;

/* `affine --distributed` (m prepared with its options): MPI started here when mpirun launched
 * the process (a plain run is one rank), every rank registering in lockstep, rank 0 writing
 * PREFIX_affine.txt, PREFIX_affine.mat, PREFIX_fsl.mat and PREFIX_summary.json. Returns the
 * exit status; messages are printed by the rank they concern (usage errors by rank 0). */
int nw_cli_affine_distributed(NwCliMethod *m, const AffineArgs *a, const NwCliDistOptions *o,
                              int *argc, char ***argv);

G_END_DECLS

#endif
