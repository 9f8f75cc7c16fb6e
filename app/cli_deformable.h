/* cli_deformable.h — the command of a dense deformable registration method (`neurowarp-cli
 * demons`, `neurowarp-cli fluid`): FIXED MOVING -o PREFIX with labels, masks, an initial
 * transform, pairs on different grids, --outputs, the summary JSON with its time split, the
 * progress line and the closing report, written once in cli_deformable.c; each command is a
 * table (cli_demons.c, cli_fluid.c). Main thread. */
#ifndef NW_CLI_DEFORMABLE_H
#define NW_CLI_DEFORMABLE_H

#include <glib.h>

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

G_END_DECLS

#endif
