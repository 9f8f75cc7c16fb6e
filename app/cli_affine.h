/* cli_affine.h — one pair of `neurowarp-cli affine` (cli_affine.c) for `neurowarp-cli batch`.
 * Any thread when m is in a batch (nw_cli_method_set_batch), else the main thread. */
#ifndef NW_CLI_AFFINE_H
#define NW_CLI_AFFINE_H

#include "cli_common.h"
#include "cli_pair.h"

G_BEGIN_DECLS

/* The pair as `neurowarp-cli affine FIXED MOVING -o PREFIX` runs it (labels are not used), m
 * prepared (nw_cli_method_prepare_options) for "affine": PREFIX_warped.nii.gz,
 * PREFIX_affine.txt, PREFIX_affine.mat, PREFIX_fsl.mat and PREFIX_summary.json written
 * together, or nothing and the error. */
gboolean nw_cli_affine_run_pair(NwCliMethod *m, const NwCliPair *pair, GError **error);

G_END_DECLS

#endif
