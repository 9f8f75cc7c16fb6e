/* cli_deformable.h — the command of a dense deformable registration method (`neurowarp-cli
 * demons`, `neurowarp-cli fluid`): FIXED MOVING -o PREFIX with labels, masks, an initial
 * transform, pairs on different grids, --outputs, the summary JSON with its time split, the
 * progress line and the closing report, written once in cli_deformable.c; each command is a
 * table (cli_demons.c, cli_fluid.c). Main thread. */
#ifndef NW_CLI_DEFORMABLE_H
#define NW_CLI_DEFORMABLE_H

#include <glib.h>

#include "cli_common.h"
#include "cli_pair.h"

G_BEGIN_DECLS

/* A figure of the closing report: "final: LABEL VALUE · ..." */
typedef struct {
  const char *name, *label;
} NwCliShownFigure;

typedef struct {
  const char *command;     /* "demons": the subcommand, in messages and usage lines */
  const char *method;      /* the registered method it runs */
  const char *summary;     /* one line under the usage of --help */
  const char *description; /* --help's text below the options (examples) */
  /* The outputs PREFIX_NAME.nii.gz the method's result has, NULL-terminated, in the order
   * they are written; "warped", "forward" and "labels" among them (the default ones, and the
   * labels warped for Dice). At most 32. */
  const char *const *outputs;
  const NwCliShownFigure *shown; /* the closing report's figures; {NULL} ends */
} NwCliDeformable;

/* Runs the command (argv[0] its name); the exit status. */
int nw_cli_deformable(const NwCliDeformable *c, int argc, char **argv);
/* One pair as the command runs it with default --outputs and fields in the ITK convention,
 * m prepared (nw_cli_method_prepare_options) for c->method: what `neurowarp-cli batch` runs
 * per pair. FALSE with the error (the message names the file) on failure, when nothing of
 * the pair's outputs is left. */
gboolean nw_cli_deformable_run_pair(const NwCliDeformable *c, NwCliMethod *m,
                                    const NwCliPair *pair, GError **error);

/* The commands' tables (cli_demons.c, cli_fluid.c). */
extern const NwCliDeformable nw_cli_demons_command;
extern const NwCliDeformable nw_cli_fluid_command;

G_END_DECLS

#endif
