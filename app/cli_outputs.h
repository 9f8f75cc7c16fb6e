/* cli_outputs.h — `--outputs LIST` of a command that writes named results, PREFIX_NAME.nii.gz
 * (result_io.h): which of its outputs the user asked for, and the claim of the files of a run
 * (atomic_file.h) in which the outputs not asked for are stale, so that --overwrite removes
 * those an earlier run with the same prefix left and a folder never mixes two runs. Main
 * thread. */
#ifndef NW_CLI_OUTPUTS_H
#define NW_CLI_OUTPUTS_H

#include <glib.h>

#include "atomic_file.h"

G_BEGIN_DECLS

/* text: names of valid (NULL-terminated, at most 32) separated by commas, blanks around a
 * name ignored, repeats harmless; "all" stands for every name. *mask: bit i for valid[i]
 * named; *all: "all" was given (the caller decides what every output means, e.g. labels only
 * with labels to warp). Errors (for a usage error), with valid = {"a", "b", "c"}:
 * "--outputs: unknown output 'x': expected a, b, c or all", and for an empty name
 * "--outputs: an empty name in 'a,,b': expected a, b, c or all". */
gboolean nw_cli_outputs_parse(const char *text, const char *const *valid, guint32 *mask,
                              gboolean *all, GError **error);
/* The names of mask in valid's order, NULL-terminated; the strings are valid's, free the
 * array with g_free. */
const char **nw_cli_outputs_names(const char *const *valid, guint32 mask);
/* PREFIX_NAME.nii.gz of every name of valid: claimed as an output when its bit is in mask,
 * else as stale (nw_outputs_claim_stale). */
gboolean nw_cli_outputs_claim(NwOutputs *o, const char *prefix, const char *const *valid,
                              guint32 mask, GError **error);

G_END_DECLS

#endif
