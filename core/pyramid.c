/* pyramid.c — see pyramid.h. */
#include "pyramid.h"

#include "resample.h"

static gboolean too_small_to_halve(const NwVolume *v)
{
  const int n[3] = {v->nx, v->ny, v->nz};
  for (int a = 0; a < 3; a++)
    if (n[a] > 1 && n[a] < 16)
      return TRUE;
  return FALSE;
}

int nw_pyramid_levels(const NwVolume *v, int max_levels)
{
  int n[3] = {v->nx, v->ny, v->nz}, levels = 1;
  for (; levels < max_levels; levels++) {
    const NwVolume size = {.nx = n[0], .ny = n[1], .nz = n[2]};
    if (too_small_to_halve(&size))
      break;
    for (int a = 0; a < 3; a++)
      n[a] = n[a] > 1 ? (n[a] + 1) / 2 : 1; /* nw_downsample2's sizes */
  }
  return levels;
}

NwVolume **nw_pyramid_new(const NwVolume *v, int max_levels, int *n_levels, GError **error)
{
  NwVolume *finest = nw_volume_try_copy(v, error);
  if (finest == NULL)
    return NULL;
  GPtrArray *fine_to_coarse = g_ptr_array_new();
  g_ptr_array_add(fine_to_coarse, finest);
  while ((int)fine_to_coarse->len < max_levels) {
    const NwVolume *c = g_ptr_array_index(fine_to_coarse, fine_to_coarse->len - 1);
    if (too_small_to_halve(c))
      break;
    NwVolume *half = nw_downsample2(c, error);
    if (half == NULL) {
      g_ptr_array_set_free_func(fine_to_coarse, (GDestroyNotify)nw_volume_free);
      g_ptr_array_unref(fine_to_coarse);
      return NULL;
    }
    g_ptr_array_add(fine_to_coarse, half);
  }
  const int n = (int)fine_to_coarse->len;
  NwVolume **levels = g_new0(NwVolume *, n);
  for (int l = 0; l < n; l++)
    levels[n - 1 - l] = g_ptr_array_index(fine_to_coarse, l);
  g_ptr_array_unref(fine_to_coarse);
  *n_levels = n;
  return levels;
}

void nw_pyramid_free(NwVolume **levels, int n_levels)
{
  if (levels == NULL)
    return;
  for (int l = 0; l < n_levels; l++)
    nw_volume_free(levels[l]);
  g_free(levels);
}
