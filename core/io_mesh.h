/* io_mesh.h — triangle mesh files: GIFTI (.gii, through giftiio), FreeSurfer binary surfaces
 * (lh.pial, lh.white, *.surf) and curvature files (lh.curv, lh.thickness), VTK legacy
 * POLYDATA (.vtk, ASCII and BINARY; classic cell lists and VTK 5.1 OFFSETS/CONNECTIVITY), PLY
 * (.ply, ascii, binary little and big endian) and Wavefront OBJ (.obj). Any thread (giftiio keeps
 * global state: its calls run under a lock).
 *
 * Coordinates are returned as stored, taken to be RAS mm (a GIFTI CoordinateSystemTransform
 * is not applied; we write the identity, scanner space), except FreeSurfer surfaces: their
 * vertices are in the "tkregister" RAS of the conformed volume; when the file carries the
 * volume-geometry footer, its c_ras is added so the surface lands in scanner RAS (the space
 * of the NIfTI it came from). Without the footer the coordinates stay tkregister RAS.
 *
 * Readers never trust counts: every count is checked against the bytes left in the file
 * before anything is allocated, every index against the vertex count; a number that is to
 * become a count or an index must be whole and in range (never a NaN cast to an integer).
 * Only regular files are read (a FIFO is refused, not waited on). GIFTI documents are
 * validated against the GIFTI 1.0 structure before giftiio reads them, and external data
 * files must lie in the GIFTI file's own folder and hold all the data the array declares. Polygons with more
 * than three vertices are fanned into triangles (v0 vi vi+1); triangle strips alternate
 * winding. Errors name the file and the problem ("lh.pial: truncated: 4 vertices and 4
 * triangles need 96 bytes, 91 left"); degenerate or out-of-range triangles are errors
 * (nw_surface_validate). Non-manifold meshes load (they can be drawn); nw_mesh_check_manifold
 * reports them. */
#ifndef NW_IO_MESH_H
#define NW_IO_MESH_H

#include <glib.h>

#include "atomic_file.h"
#include "surface.h"

G_BEGIN_DECLS

typedef enum {
  NW_MESH_AUTO,       /* reading: by content, then by name; writing: by name */
  NW_MESH_GIFTI,      /* .gii */
  NW_MESH_FREESURFER, /* triangle-file magic 0xFFFFFE, big-endian (read only) */
  NW_MESH_VTK,        /* .vtk legacy POLYDATA (written BINARY, big-endian) */
  NW_MESH_PLY,        /* .ply (written binary_little_endian) */
  NW_MESH_OBJ,        /* .obj */
} NwMeshFormat;

const char *nw_mesh_format_name(NwMeshFormat f); /* "GIFTI", "FreeSurfer", ... */
/* By extension only (case-insensitive; FreeSurfer names such as lh.pial, rh.white, .surf,
 * .inflated, .sphere, .orig, .smoothwm); NW_MESH_AUTO when unknown. */
NwMeshFormat nw_mesh_format_from_name(const char *path);

/* Read a mesh; the format is detected from the content (magic bytes / header), else the
 * name. Per-vertex scalars in the file (PLY extra vertex property, VTK POINT_DATA SCALARS,
 * GIFTI data array of one value per vertex) go to s->scalars. Normals are not read: call
 * nw_surface_compute_normals. */
NwSurface *nw_mesh_read(const char *path, GError **error);

/* Read per-vertex values for s from a FreeSurfer curv-format file (magic 0xFFFFFF: curv,
 * thickness, sulc, area) or a GIFTI with one data array of n_vertices values, replacing
 * s->scalars. The count must equal s->n_vertices. */
gboolean nw_mesh_read_scalars(const char *path, NwSurface *s, GError **error);

/* Write s (with its scalars, where the format has a place for them) atomically
 * (nw_write_atomically). format NW_MESH_AUTO picks by name; FreeSurfer cannot be written. */
gboolean nw_mesh_write(const char *path, const NwSurface *s, NwMeshFormat format, GError **error);
/* The same into an output set: named when the set is committed (atomic_file.h). */
gboolean nw_mesh_write_to(NwOutputs *o, const char *path, const NwSurface *s, NwMeshFormat format,
                          GError **error);

G_END_DECLS

#endif
