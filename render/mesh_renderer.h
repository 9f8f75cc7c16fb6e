/* mesh_renderer.h — triangle meshes (NwSurface, world RAS mm) as GL buffers drawn with a
 * head light, one colour or a per-vertex scalar through a colour map; and the contour where
 * a mesh cuts an axis-aligned slice plane, for the 2D views.
 * Thread: the one with the GL context current (the contour function is pure CPU, any). */
#ifndef NW_MESH_RENDERER_H
#define NW_MESH_RENDERER_H

#include "renderer.h"
#include "surface.h"

G_BEGIN_DECLS

/* Buffers only (no vertex array object), so that the views of one window, whose GL
 * contexts share objects, draw one copy; the renderer binds them per draw. */
typedef struct {
  GLuint vbo_pos, vbo_normal, vbo_scalar, ibo;
  int n_triangles;
  gboolean has_scalars;
  float scalar_min, scalar_max;
  /* soup meshes (nw_gl_mesh_new_soup): one interleaved buffer vbo_pos, no ibo */
  gboolean soup;
  size_t max_triangles;
} NwGlMesh;

/* Upload s (normals are computed on a copy when s has none). */
NwGlMesh *nw_gl_mesh_new(const NwSurface *s, GError **error);
/* Floats per vertex of a soup mesh: position (RAS mm) then unit normal. */
#define NW_GL_MESH_SOUP_FLOATS 6
/* A triangle soup with room for max_triangles (3 vertices each, NW_GL_MESH_SOUP_FLOATS
 * floats per vertex in vbo_pos, contents undefined) that someone else fills, e.g. CUDA
 * interop; set n_triangles to what was written. One colour (no scalars). */
NwGlMesh *nw_gl_mesh_new_soup(size_t max_triangles, GError **error);
void nw_gl_mesh_free(NwGlMesh *m);

typedef struct {
  float color[4];       /* rgb used without scalars; [3] unused */
  gboolean use_scalars; /* colour by per-vertex scalar through colormap [lo, hi] */
  NwColormap colormap;
  float lo, hi;
  float opacity;
  gboolean cut;        /* cut away the octant of cut_center that faces the eye */
  float cut_center[3]; /* RAS mm */
  float cut_sign[3];   /* +1 / -1 per axis: which octant */
} NwMeshStyle;

/* view: world -> eye (rigid), mvp: world -> clip; depth test is enabled by the caller. */
void nw_render_mesh(NwRenderer *r, const NwGlMesh *m, const double view[16], const double mvp[16],
                    const NwMeshStyle *style);

/* Segments where the mesh crosses the plane world[axis] = depth (axis 0 x, 1 y, 2 z):
 * appends 2 points (6 floats, RAS mm) per crossing triangle to out (GArray of float).
 * Returns the number of segments. */
int nw_surface_plane_contour(const NwSurface *s, int axis, double depth, GArray *out);

G_END_DECLS

#endif
