/* cli_pair.h — one registration pair as the commands take it (FIXED MOVING, masks, labels,
 * an initial transform, -o PREFIX): what `neurowarp-cli affine`, `demons` and `fluid` run
 * and what each row of `neurowarp-cli batch` names. Plain data; paths borrowed. */
#ifndef NW_CLI_PAIR_H
#define NW_CLI_PAIR_H

typedef struct {
  const char *fixed, *moving;               /* required */
  const char *fixed_mask, *moving_mask;     /* NULL: none; each on its image's grid */
  const char *fixed_labels, *moving_labels; /* NULL: none; deformable methods only */
  const char *initial;                      /* fixed world -> moving world, or NULL */
  const char *prefix;                       /* PREFIX_warped.nii.gz, PREFIX_summary.json, ... */
} NwCliPair;

#endif
