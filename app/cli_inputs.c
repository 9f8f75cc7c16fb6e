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

NwVolume *nw_cli_read_mask(int which, const char *path, const NwVolume *image,
                           const char *image_path, gboolean ignore_spacing, GError **error)
{
  static const char *const what[NW_CLI_N_INPUTS] = {"fixed image", "moving image", "fixed mask",
                                                    "moving mask"};
  g_return_val_if_fail(which == NW_CLI_FIXED_MASK || which == NW_CLI_MOVING_MASK, NULL);
  NwVolume *mask = nw_cli_read_image(path, ignore_spacing, error);
  if (mask == NULL)
    return NULL;
  if (!nw_volume_same_grid(mask, image)) {
    g_set_error(error, NW_ERROR, NW_ERROR_MISMATCH,
                "%s: the %s (%d x %d x %d) is not on the grid of the %s %s (%d x %d x %d)", path,
                what[which], mask->nx, mask->ny, mask->nz, what[which - 2], image_path, image->nx,
                image->ny, image->nz);
    nw_volume_free(mask);
    return NULL;
  }
  for (size_t e = 0; e < nw_volume_n_floats(mask); e++)
    if (mask->data[e] >= 0.5f)
      return mask;
  g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
              "%s: the %s is empty (no voxel >= 0.5): nothing would be compared", path,
              what[which]);
  nw_volume_free(mask);
  return NULL;
}

gboolean nw_cli_inputs_read(NwCliInputs *in, const char *const *paths, gboolean ignore_spacing,
                            GError **error)
{
  for (int i = 0; i < NW_CLI_N_INPUTS; i++) {
    if (paths[i] == NULL)
      continue;
    in->v[i] = i < NW_CLI_FIXED_MASK ? nw_cli_read_image(paths[i], ignore_spacing, error)
                                     : nw_cli_read_mask(i, paths[i], in->v[i - 2], paths[i - 2],
                                                        ignore_spacing, error);
    if (in->v[i] == NULL)
      return FALSE;
  }
  return TRUE;
}

void nw_cli_inputs_clear(NwCliInputs *in)
{
  for (int i = 0; i < NW_CLI_N_INPUTS; i++)
    g_clear_pointer(&in->v[i], nw_volume_free);
}
