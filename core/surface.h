/* surface.h — triangle meshes: brain surfaces loaded from files, and level-set meshes made
 * by marching cubes. Vertices are in world RAS millimetres (the same space as
 * NwVolume.vox_to_ras), triangles counter-clockwise seen from outside. Plain data; any
 * thread may use a surface it owns. */
#ifndef NW_SURFACE_H
#define NW_SURFACE_H

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  int n_vertices, n_triangles;
  float *vertices;     /* n_vertices * 3, RAS mm; owned */
  float *normals;      /* n_vertices * 3, unit, outward; owned; NULL until computed */
  float *scalars;      /* n_vertices per-vertex values (curvature, thickness...) or NULL */
  guint32 *triangles;  /* n_triangles * 3 vertex indices; owned */
} NwSurface;

NwSurface *nw_surface_new(int n_vertices, int n_triangles, GError **error);
NwSurface *nw_surface_copy(const NwSurface *s);
void nw_surface_free(NwSurface *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(NwSurface, nw_surface_free)

/* Area-weighted vertex normals (allocates normals if needed). */
void nw_surface_compute_normals(NwSurface *s);
/* Axis-aligned bounds in RAS mm: lo[3], hi[3]. */
void nw_surface_bounds(const NwSurface *s, float lo[3], float hi[3]);
/* Indices in range, no degenerate triangles: error naming the first bad triangle. */
gboolean nw_surface_validate(const NwSurface *s, const char *name, GError **error);

/* Edge census of a triangle mesh. An edge used by one triangle is a boundary (an open
 * surface, allowed); by three or more, non-manifold; twice in the same direction,
 * misoriented (neighbouring triangles wound oppositely). */
typedef struct {
  int n_edges;             /* distinct undirected edges */
  int n_boundary_edges;    /* used once */
  int n_nonmanifold_edges; /* used three or more times */
  int n_misoriented_edges; /* used twice, both times in the same direction */
  int euler;               /* V - E + F; 2 for a closed surface of genus 0 */
} NwMeshTopology;
/* TRUE when every edge is used at most twice and consistently oriented; otherwise FALSE and
 * an NW_ERROR_FORMAT error naming the file, the counts and the first bad edge. Meshes that
 * fail may still be drawn. topo (may be NULL) receives the census either way. */
gboolean nw_mesh_check_manifold(const NwSurface *s, const char *name, NwMeshTopology *topo,
                                GError **error);

G_END_DECLS

#endif
