/* gl_live.h — the GL side of the live view: 3D textures (image GL_R32F, field GL_RGBA32F)
 * and a vertex buffer (iso-surface triangle soup) registered with CUDA and refilled from a
 * live job's front buffer (cuda/interop/nw_live.h) device-to-device, through nw_cuda_gl.h. The
 * textures are re-made (and re-registered) when the front's grid changes, i.e. at a new
 * pyramid level. One NwGlLive per live job and group of GL contexts that share objects
 * (the views of a window): one map, fill and unmap per frame for all its parts.
 * Thread: the one with the GL context current. */
#ifndef NW_GL_LIVE_H
#define NW_GL_LIVE_H

#include <glib.h>

#include "gl_volume.h"
#include "mesh_renderer.h"
#include "nw_live.h"

G_BEGIN_DECLS

typedef enum {
  NW_GL_LIVE_IMAGE = 1 << 0,
  NW_GL_LIVE_FIELD = 1 << 1,
  NW_GL_LIVE_MESH = 1 << 2,
} NwGlLiveParts;

typedef struct NwGlLive NwGlLive;

/* Whether the current GL context can take a CUDA job's frames by interop (same CUDA device
 * as the jobs); FALSE with a one-line reason otherwise (software GL, no CUDA, built without
 * CUDA). With the context current. */
gboolean nw_gl_live_available(char *why, size_t why_len);

/* Largest grid of a live field texture and of the grid a live surface is made from, by
 * default: 2^20 voxels (about 101^3). Larger frames are reduced by block means for these two
 * parts (core/live_reduce.h) — the views need neither at full resolution while a job
 * runs, and the job keeps the GPU — while the image stays at full resolution. */
#define NW_GL_LIVE_MAX_VOXELS ((size_t)1 << 20)
/* The live surface is remade every NW_GL_LIVE_MESH_EVERY-th frame (and on every new grid):
 * marching cubes is the largest piece of a frame's GPU work, and a surface at half the
 * frame rate still moves smoothly. */
#define NW_GL_LIVE_MESH_EVERY 2

/* parts: which of the front's contents this one shows. iso: the iso-surface level. */
NwGlLive *nw_gl_live_new(guint parts, float iso);
/* Another bound than NW_GL_LIVE_MAX_VOXELS for the field and surface grids (tests). */
void nw_gl_live_set_max_voxels(NwGlLive *l, size_t max_voxels);
/* Show more of the front (the views of one window share one NwGlLive per job, filled once
 * per frame for every part any of them shows). */
void nw_gl_live_add_parts(NwGlLive *l, guint parts);
/* The surface every `every`-th frame (1: every frame). */
void nw_gl_live_set_mesh_every(NwGlLive *l, int every);
void nw_gl_live_free(NwGlLive *l);
void nw_gl_live_set_iso(NwGlLive *l, float iso);

/* Bring the GL objects up to the front's newest frame (nothing to do when the iteration is
 * the one already shown). fresh_coming: the job is running and answers when asked
 * (nw_live_source_fresh_coming). Then, when the objects had to be made first (the first
 * frame, a new pyramid level, new parts: milliseconds in which a fast job moves on), the
 * frame in the front is left as stale and nw_gl_live_awaits_frame turns TRUE: the caller
 * asks for a frame (nw_live_source_want), and a later update fills that one; the objects
 * of the previous grid are drawn meanwhile. FALSE with an error when interop fails (no
 * CUDA, software GL, out of memory): the caller then falls back to host frames. */
gboolean nw_gl_live_update(NwGlLive *l, NwLiveFront *front, gboolean fresh_coming,
                           GError **error);
/* The last update made objects and waits for a fresher frame than the front held. */
gboolean nw_gl_live_awaits_frame(const NwGlLive *l);

/* The iteration in the GL objects drawn (-1 before the first frame). */
int nw_gl_live_iteration(const NwGlLive *l);
/* NULL until the first frame (or when not among the parts); while new objects wait for
 * their first fill, the previous grid's. The field texture has nc 4 (xyz = displacement in
 * voxels of its own, possibly reduced, grid), which the field renderer accepts. */
const NwGlVolume *nw_gl_live_image(const NwGlLive *l);
const NwGlVolume *nw_gl_live_field(const NwGlLive *l);
const NwGlMesh *nw_gl_live_mesh(const NwGlLive *l);

G_END_DECLS

#endif
