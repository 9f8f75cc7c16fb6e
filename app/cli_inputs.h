/* cli_inputs.h — reading the images of a registration command (affine, resample, and the
 * masks of demons): NIfTI volumes or 2D image files by content (io_image.h), each checked to
 * be finite, masks checked to be on their image's grid and not empty; errors name the file.
 * Main thread. */
#ifndef NW_CLI_INPUTS_H
#define NW_CLI_INPUTS_H

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

enum { NW_CLI_FIXED, NW_CLI_MOVING, NW_CLI_FIXED_MASK, NW_CLI_MOVING_MASK, NW_CLI_N_INPUTS };

typedef struct {
  NwVolume *v[NW_CLI_N_INPUTS]; /* owned; NULL where no path was given */
} NwCliInputs;

/* One image (NIfTI or a 2D image file), finite. ignore_spacing: a 2D image file's pixels are
 * 1 mm whatever its resolution tags say. */
NwVolume *nw_cli_read_image(const char *path, gboolean ignore_spacing, GError **error);
/* The mask `which` (NW_CLI_FIXED_MASK or NW_CLI_MOVING_MASK) at path, read as
 * nw_cli_read_image and checked to be on the grid of image, its fixed or moving image read
 * from image_path (the error names both files), and to have a voxel inside (>= 0.5). */
NwVolume *nw_cli_read_mask(int which, const char *path, const NwVolume *image,
                           const char *image_path, gboolean ignore_spacing, GError **error);
/* paths[NW_CLI_N_INPUTS]: fixed and moving required, masks may be NULL. On failure what was
 * read stays in `in` for nw_cli_inputs_clear. */
gboolean nw_cli_inputs_read(NwCliInputs *in, const char *const *paths, gboolean ignore_spacing,
                            GError **error);
void nw_cli_inputs_clear(NwCliInputs *in);

G_END_DECLS

#endif
