/* gl_live.c — GL objects showing a live front through CUDA–GL interop (see gl_live.h).
 * Thread: the one with the GL context current. */
#include "gl_live.h"

#include <string.h>

#include "live_reduce.h"
#include "nw_cuda_gl.h"
#include "nw_error.h"

struct NwGlLive {
  guint parts;
  float iso;
  size_t max_voxels;      /* field and surface grids */
  int field_reduce, mesh_reduce; /* for the grid below */
  int mesh_every;         /* the surface is remade every mesh_every-th frame */
  int frames;             /* frames filled since the grid was fitted */
  int iteration; /* in the GL objects; -1 before their first fill */
  gboolean dirty; /* refill even when the front's frame is the one shown (parts, iso) */
  /* After new objects were made (slowly: textures, their registration) the frame then in
   * the front has gone stale; a running job's next frame is awaited instead (see update). */
  gboolean awaiting;
  int stale_iteration;
  /* The objects of the previous grid, drawn until the new ones are first filled (so a new
   * pyramid level never shows empty textures): old_iteration is what they hold. */
  NwGlVolume *old_image, *old_field;
  NwCudaGl *old_image_res, *old_field_res;
  int old_iteration;
  /* the grid the textures were made for */
  int nx, ny, nz;
  double vox_to_ras[16];
  gboolean have_grid;
  NwGlVolume *image, *field;
  NwCudaGl *image_res, *field_res;
  NwGlMesh *mesh;
  NwCudaGl *mesh_res;
};

gboolean nw_gl_live_available(char *why, size_t why_len)
{
  return nw_cuda_gl_available(why, why_len);
}

NwGlLive *nw_gl_live_new(guint parts, float iso)
{
  NwGlLive *l = g_new0(NwGlLive, 1);
  l->parts = parts;
  l->iso = iso;
  l->iteration = -1;
  l->old_iteration = -1;
  l->max_voxels = NW_GL_LIVE_MAX_VOXELS;
  l->mesh_every = NW_GL_LIVE_MESH_EVERY;
  return l;
}

void nw_gl_live_add_parts(NwGlLive *l, guint parts)
{
  if ((l->parts | parts) == l->parts)
    return;
  l->parts |= parts;
  l->have_grid = FALSE; /* objects for the new parts at the next update */
  l->dirty = TRUE;
}

void nw_gl_live_set_mesh_every(NwGlLive *l, int every)
{
  l->mesh_every = MAX(every, 1);
}

void nw_gl_live_set_max_voxels(NwGlLive *l, size_t max_voxels)
{
  l->max_voxels = max_voxels;
  l->have_grid = FALSE; /* textures for the new bound at the next update */
  l->dirty = TRUE;
}

static void drop_old_textures(NwGlLive *l)
{
  g_clear_pointer(&l->old_image_res, nw_cuda_gl_unregister);
  g_clear_pointer(&l->old_field_res, nw_cuda_gl_unregister);
  g_clear_pointer(&l->old_image, nw_gl_volume_free);
  g_clear_pointer(&l->old_field, nw_gl_volume_free);
  l->old_iteration = -1;
}

/* The current objects become the old ones, drawn until new ones are filled; objects never
 * filled are simply dropped. */
static void retire_textures(NwGlLive *l)
{
  if (l->iteration >= 0) {
    drop_old_textures(l);
    l->old_image = g_steal_pointer(&l->image);
    l->old_field = g_steal_pointer(&l->field);
    l->old_image_res = g_steal_pointer(&l->image_res);
    l->old_field_res = g_steal_pointer(&l->field_res);
    l->old_iteration = l->iteration;
  }
  g_clear_pointer(&l->image_res, nw_cuda_gl_unregister);
  g_clear_pointer(&l->field_res, nw_cuda_gl_unregister);
  g_clear_pointer(&l->image, nw_gl_volume_free);
  g_clear_pointer(&l->field, nw_gl_volume_free);
  l->have_grid = FALSE;
  l->iteration = -1;
}

static void drop_mesh(NwGlLive *l)
{
  g_clear_pointer(&l->mesh_res, nw_cuda_gl_unregister);
  g_clear_pointer(&l->mesh, nw_gl_mesh_free);
}

void nw_gl_live_free(NwGlLive *l)
{
  if (l == NULL)
    return;
  retire_textures(l);
  drop_old_textures(l);
  drop_mesh(l);
  g_free(l);
}

void nw_gl_live_set_iso(NwGlLive *l, float iso)
{
  if (l->iso != iso)
    l->dirty = TRUE; /* refill at the next update */
  l->iso = iso;
}

/* Textures (and their registrations) for the grid of the frame now in the front; *made
 * when they had to be made. */
static gboolean fit_textures(NwGlLive *l, const NwLiveView *v, gboolean *made, GError **error)
{
  if (l->have_grid && v->nx == l->nx && v->ny == l->ny && v->nz == l->nz &&
      memcmp(v->vox_to_ras, l->vox_to_ras, sizeof l->vox_to_ras) == 0)
    return TRUE;
  *made = TRUE;
  retire_textures(l);
  if (l->parts & NW_GL_LIVE_IMAGE) {
    l->image = nw_gl_volume_new_empty(v->nx, v->ny, v->nz, 1, v->vox_to_ras, error);
    if (l->image == NULL ||
        (l->image_res = nw_cuda_gl_register_texture3d(l->image->tex, error)) == NULL)
      return FALSE;
  }
  l->field_reduce = l->mesh_reduce = nw_live_reduce_choose(v->nx, v->ny, v->nz, l->max_voxels);
  if (l->parts & NW_GL_LIVE_FIELD) {
    int f[3], d[3];
    double affine[16];
    nw_live_reduce_grid(v->nx, v->ny, v->nz, v->vox_to_ras, l->field_reduce, f, d, affine);
    l->field = nw_gl_volume_new_empty(d[0], d[1], d[2], 4, affine, error);
    if (l->field == NULL ||
        (l->field_res = nw_cuda_gl_register_texture3d(l->field->tex, error)) == NULL)
      return FALSE;
  }
  l->nx = v->nx;
  l->ny = v->ny;
  l->nz = v->nz;
  memcpy(l->vox_to_ras, v->vox_to_ras, sizeof l->vox_to_ras);
  l->have_grid = TRUE;
  l->frames = 0; /* the first frame on a grid makes its surface */
  return TRUE;
}

/* A soup buffer with room for at least n triangles (*made when it had to be made). A closed
 * surface through a grid crosses at most a few cubes per boundary voxel; start from a bound
 * of that order and grow. */
static gboolean fit_mesh(NwGlLive *l, size_t n, gboolean *made, GError **error)
{
  if (l->mesh != NULL && l->mesh->max_triangles >= n)
    return TRUE;
  *made = TRUE;
  drop_mesh(l);
  const size_t room = MAX(n + n / 4, (size_t)200000);
  l->mesh = nw_gl_mesh_new_soup(room, error);
  if (l->mesh == NULL)
    return FALSE;
  l->mesh_res = nw_cuda_gl_register_buffer(
      l->mesh->vbo_pos, room * 3 * NW_GL_MESH_SOUP_FLOATS * sizeof(float), error);
  return l->mesh_res != NULL;
}

/* The front's grid now: a read with no copies (the lock is held for microseconds). */
static void peek_grid(NwLiveFront *front, NwLiveView *v)
{
  nw_live_front_begin_read(front, NULL, v);
  nw_live_front_end_read(front, NULL);
}

gboolean nw_gl_live_update(NwGlLive *l, NwLiveFront *front, gboolean fresh_coming,
                           GError **error)
{
  const int newest = nw_live_front_iteration(front);
  if (newest < 0 || (newest == l->iteration && !l->dirty))
    return TRUE;
  if (l->awaiting && fresh_coming && newest == l->stale_iteration)
    return TRUE; /* the fresher frame asked for has not come yet */
  NwLiveView v;
  peek_grid(front, &v);
  if (v.iteration < 0)
    return TRUE;
  gboolean made = FALSE;
  if (!fit_textures(l, &v, &made, error))
    return FALSE;
  if ((l->parts & NW_GL_LIVE_MESH) && !fit_mesh(l, 0, &made, error))
    return FALSE;
  /* Making textures and registering them takes milliseconds, in which a fast job moves on:
   * the frame now in the front would be drawn stale. When the job will answer, its next
   * frame is drawn instead (the caller asks for it: nw_gl_live_awaits_frame) and the old
   * objects meanwhile. The stale frame still goes into the new objects, unseen: the first
   * fill maps the new registrations and loads the fill kernels, milliseconds that would
   * otherwise delay the fresh frame. */
  l->awaiting = made && fresh_coming;
  /* the surface changes slowly beside the image: remade every mesh_every-th frame */
  const gboolean mesh_now = l->mesh_res != NULL && l->frames % l->mesh_every == 0;
  for (int attempt = 0; attempt < 3; attempt++) {
    NwCudaGlTargets t = {.image_tex = l->image_res, .field_tex = l->field_res,
                         .mesh_buf = mesh_now ? l->mesh_res : NULL,
                         .field_reduce = l->field_reduce,
                         .mesh_reduce = l->mesh_reduce, .iso = l->iso,
                         .max_triangles = l->mesh != NULL ? l->mesh->max_triangles : 0};
    int iteration = -1;
    g_autoptr(GError) why = NULL;
    if (!nw_cuda_gl_fill_from_front(front, &t, &iteration, &why)) {
      /* the writer moved to a new pyramid level between peek and fill: re-make, retry */
      if (g_error_matches(why, NW_ERROR, NW_ERROR_MISMATCH) && attempt < 2) {
        peek_grid(front, &v);
        if (!fit_textures(l, &v, &made, error))
          return FALSE;
        continue;
      }
      g_propagate_error(error, g_steal_pointer(&why));
      return FALSE;
    }
    if (mesh_now) {
      if (t.n_total > t.n_triangles && attempt < 2) { /* too small: grow and fill again */
        if (!fit_mesh(l, t.n_total, &made, error))
          return FALSE;
        continue;
      }
      l->mesh->n_triangles = (int)t.n_triangles;
    }
    if (l->awaiting) { /* filled, not shown: the next frame is (frames stays 0: its surface) */
      l->stale_iteration = iteration;
      return TRUE;
    }
    l->iteration = iteration;
    l->frames++;
    l->dirty = FALSE;
    drop_old_textures(l);
    return TRUE;
  }
  g_set_error(error, NW_ERROR, NW_ERROR_DEVICE, "live frame: the front kept changing size");
  return FALSE;
}

gboolean nw_gl_live_awaits_frame(const NwGlLive *l)
{
  return l->awaiting;
}

int nw_gl_live_iteration(const NwGlLive *l)
{
  return l->iteration >= 0 ? l->iteration : l->old_iteration;
}

const NwGlVolume *nw_gl_live_image(const NwGlLive *l)
{
  return l->iteration >= 0 ? l->image : l->old_image;
}

const NwGlVolume *nw_gl_live_field(const NwGlLive *l)
{
  return l->iteration >= 0 ? l->field : l->old_field;
}

/* The soup holds the last surface made (kept across grids: the buffer only grows). */
const NwGlMesh *nw_gl_live_mesh(const NwGlLive *l)
{
  return nw_gl_live_iteration(l) >= 0 ? l->mesh : NULL;
}
