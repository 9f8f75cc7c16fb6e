/* cli_inputs.c — see cli_inputs.h. */
#include "cli_inputs.h"

#include "io_image.h"
#include "nw_error.h"

NwVolume *nw_cli_read_image(const char *path, gboolean ignore_spacing, GError **error)
{
  NwVolume *v = nw_volume_read_any(path, error);
  if (v == NULL)
    return NULL;
  if (!nw_volume_check_finite(v, path, error)) {
    nw_volume_free(v);
    return NULL;
  }
  if (ignore_spacing && nw_image_is_2d_file(path))
    nw_volume_set_spacing(v, 1.0, 1.0, 1.0);
  return v;
}

gboolean nw_cli_inputs_read(NwCliInputs *in, const char *const *paths, gboolean ignore_spacing,
                            GError **error)
{
  static const char *const what[NW_CLI_N_INPUTS] = {"fixed image", "moving image", "fixed mask",
                                                    "moving mask"};
  for (int i = 0; i < NW_CLI_N_INPUTS; i++) {
    if (paths[i] == NULL)
      continue;
    if ((in->v[i] = nw_cli_read_image(paths[i], ignore_spacing, error)) == NULL)
      return FALSE;
    const NwVolume *image = in->v[i - (i >= NW_CLI_FIXED_MASK ? 2 : 0)];
    if (i >= NW_CLI_FIXED_MASK && !nw_volume_same_grid(in->v[i], image)) {
      g_set_error(error, NW_ERROR, NW_ERROR_MISMATCH,
                  "%s: the %s (%d x %d x %d) is not on the grid of the %s %s (%d x %d x %d)",
                  paths[i], what[i], in->v[i]->nx, in->v[i]->ny, in->v[i]->nz, what[i - 2],
                  paths[i - 2], image->nx, image->ny, image->nz);
      return FALSE;
    }
  }
  return TRUE;
}

void nw_cli_inputs_clear(NwCliInputs *in)
{
  for (int i = 0; i < NW_CLI_N_INPUTS; i++)
    g_clear_pointer(&in->v[i], nw_volume_free);
}
