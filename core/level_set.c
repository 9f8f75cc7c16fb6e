/* level_set.c — the zero level set as a mesh with sampled values, and connected components of
 * the inside and the outside (level_set.h). CPU; any thread. */
#include "level_set.h"

#include "marching_cubes.h"
#include "nw_error.h"
#include "sampler.h"

NwSurface *nw_level_set_mesh(const NwVolume *phi, const NwVolume *values, GError **error)
{
  if (phi->nc != 1 || (values != NULL && values->nc != 1)) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "level set: one component expected");
    return NULL;
  }
  if (values != NULL && !nw_volume_same_grid(phi, values)) {
    g_set_error(error, NW_ERROR, NW_ERROR_MISMATCH,
                "level set: the values are not on the level set's grid");
    return NULL;
  }
  /* Marching cubes counts value >= iso as inside; the level set's inside is phi <= 0. */
  g_autoptr(NwVolume) neg = nw_volume_try_copy(phi, error);
  if (neg == NULL)
    return NULL;
  const size_t n = nw_volume_n_voxels(neg);
  for (size_t e = 0; e < n; e++)
    neg->data[e] = -neg->data[e];
  NwSurface *s = nw_marching_cubes(neg, 0.0f, error);
  if (s == NULL)
    return NULL;
  if (s->n_triangles == 0) {
    nw_surface_free(s);
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "level set: no surface (phi never crosses 0)");
    return NULL;
  }
  if (values == NULL)
    return s;
  s->scalars = g_new0(float, (gsize)s->n_vertices + 1);
  for (int v = 0; v < s->n_vertices; v++) {
    const double ras[3] = {s->vertices[v * 3], s->vertices[v * 3 + 1], s->vertices[v * 3 + 2]};
    double ijk[3];
    nw_volume_world_to_voxel(values, ras, ijk);
    float x = 0.0f;
    nw_sampler_sample(values, NW_SAMPLER_LINEAR, ijk[0], ijk[1], ijk[2], &x);
    s->scalars[v] = x; /* vertices lie between voxel centres: always in the domain */
  }
  return s;
}

/* Label the components of the voxels where inside(phi) == side by flood fill; their sizes. */
static GArray *components(const NwVolume *phi, gboolean side)
{
  const size_t n = nw_volume_n_voxels(phi);
  const size_t sx = 1, sy = (size_t)phi->nx, sz = (size_t)phi->nx * phi->ny;
  g_autofree guint8 *seen = g_new0(guint8, n);
  g_autofree size_t *queue = g_new(size_t, n);
  GArray *sizes = g_array_new(FALSE, FALSE, sizeof(int));
  for (size_t start = 0; start < n; start++) {
    if (seen[start] || (phi->data[start] <= 0.0f) != side)
      continue;
    size_t head = 0, tail = 0;
    queue[tail++] = start;
    seen[start] = 1;
    while (head < tail) {
      size_t e = queue[head++];
      int c[3] = {(int)(e % sy), (int)(e / sy % (size_t)phi->ny), (int)(e / sz)};
      const int lim[3] = {phi->nx, phi->ny, phi->nz};
      const size_t stride[3] = {sx, sy, sz};
      for (int a = 0; a < 3; a++)
        for (int s = -1; s <= 1; s += 2) {
          if (c[a] + s < 0 || c[a] + s >= lim[a])
            continue;
          size_t f = s < 0 ? e - stride[a] : e + stride[a];
          if (!seen[f] && (phi->data[f] <= 0.0f) == side) {
            seen[f] = 1;
            queue[tail++] = f;
          }
        }
    }
    int size = (int)tail;
    g_array_append_val(sizes, size);
  }
  return sizes;
}

static int larger_first(gconstpointer a, gconstpointer b)
{
  return *(const int *)b - *(const int *)a;
}

void nw_level_set_components(const NwVolume *phi, int *n_inside, int *n_outside,
                             GArray **inside_sizes, GArray **outside_sizes)
{
  GArray *in = components(phi, TRUE), *out = components(phi, FALSE);
  g_array_sort(in, larger_first);
  g_array_sort(out, larger_first);
  *n_inside = (int)in->len;
  *n_outside = (int)out->len;
  if (inside_sizes != NULL)
    *inside_sizes = in;
  else
    g_array_unref(in);
  if (outside_sizes != NULL)
    *outside_sizes = out;
  else
    g_array_unref(out);
}
