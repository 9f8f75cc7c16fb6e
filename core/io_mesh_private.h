/* io_mesh_private.h — what the mesh readers and writers of each format (io_mesh_*.c) share:
 * a bounds-checked cursor over a file loaded into memory, the builder that turns parsed
 * vertices and polygons into a validated NwSurface, the checked conversions from parsed
 * numbers to counts and vertex indices, and little writing helpers. Not installed; core only.
 * Any thread (no shared state). */
#ifndef NW_IO_MESH_PRIVATE_H
#define NW_IO_MESH_PRIVATE_H

#include <glib.h>
#include <stdio.h>

#include "io_mesh.h"

G_BEGIN_DECLS

/* ---- cursor over a file in memory ---- */

typedef struct {
  const char *name; /* the user's path, for messages */
  const guint8 *p, *end;
} Cursor;

/* "NAME: <message>" as NW_ERROR_FORMAT; returns FALSE. */
gboolean mesh_fail(GError **error, const Cursor *c, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
gsize mesh_left(const Cursor *c);
/* n items of `size` bytes must still be in the file: refuses absurd counts before any
 * allocation. */
gboolean mesh_need(Cursor *c, gint64 n, gsize size, const char *what, GError **error);
guint32 mesh_be32(Cursor *c); /* the caller checked that 4 bytes are left */
float mesh_bits_to_float(guint32 u);
void mesh_skip_space(Cursor *c);
/* Next line (without its "\r\n"), as a new string; NULL at the end of the file. */
char *mesh_next_line(Cursor *c);
/* Next non-blank line, leading blanks removed; NULL at the end. */
char *mesh_next_content_line(Cursor *c);
/* An ASCII number (the buffer is NUL-terminated, so strtod stops). */
gboolean mesh_read_ascii(Cursor *c, double *out, const char *what, GError **error);
/* The whole file (a regular file: input_file.h) into *contents, NUL-terminated. */
gboolean mesh_load(const char *path, char **contents, Cursor *c, GError **error);

/* A parsed number as a count or a vertex index: finite, whole and in 0..max. A cast from a
 * NaN or out-of-range double to an integer is undefined behaviour in C (GCC turns a NaN
 * index into vertex 0), so every such value passes here first. */
gboolean mesh_whole(double x, double max);
/* index < 2^32 - 1 (the largest guint32 marks "none" nowhere; it fails validation) with the
 * message "NAME: WHAT refers to vertex X" otherwise. */
gboolean mesh_vertex_index(const Cursor *c, double x, const char *what, guint32 *out,
                           GError **error);

/* ---- building the surface ---- */

typedef struct {
  GArray *vertices;  /* float, 3 per vertex */
  GArray *triangles; /* guint32, 3 per triangle */
  GArray *scalars;   /* float per vertex, or NULL */
} Builder;

void mesh_builder_init(Builder *b);
void mesh_builder_clear(Builder *b);
/* Polygon v0..v(n-1) as the fan (v0, vi, vi+1). */
void mesh_add_polygon(Builder *b, const guint32 *v, gsize n);
/* Strip v0..v(n-1): triangle i is (vi, vi+1, vi+2), odd ones reversed to keep the winding;
 * the degenerate triangles strips use as joints are dropped. */
void mesh_add_strip(Builder *b, const guint32 *v, gsize n);
/* The surface, validated (nw_surface_validate); b is cleared either way. */
NwSurface *mesh_builder_finish(Builder *b, const char *name, GError **error);

/* ---- the formats (one file each) ---- */

NwSurface *nw_mesh_read_freesurfer(Cursor *c, GError **error);
float *nw_mesh_read_freesurfer_curv(Cursor *c, int n_expected, GError **error);
NwSurface *nw_mesh_read_vtk(Cursor *c, GError **error);
NwSurface *nw_mesh_read_ply(Cursor *c, GError **error);
NwSurface *nw_mesh_read_obj(Cursor *c, GError **error);
/* GIFTI goes through giftiio, which reads the file itself (path), after io_mesh_gifti_check.c
 * has validated the document. */
NwSurface *nw_mesh_read_gifti(const char *path, GError **error);
float *nw_mesh_read_gifti_values(const char *path, int n, GError **error);

/* NwFileWriter (atomic_file.h) for each writable format; data is the NwSurface. */
gboolean nw_mesh_write_ply(const char *tmp_path, gpointer data, GError **error);
gboolean nw_mesh_write_obj(const char *tmp_path, gpointer data, GError **error);
gboolean nw_mesh_write_vtk(const char *tmp_path, gpointer data, GError **error);
gboolean nw_mesh_write_gifti(const char *tmp_path, gpointer data, GError **error);

/* ---- writing helpers ---- */

void mesh_put_be32(FILE *f, guint32 u);
void mesh_put_be_float(FILE *f, float x);
void mesh_put_le32(FILE *f, guint32 u);
void mesh_put_le_float(FILE *f, float x);
FILE *mesh_create(const char *tmp_path, GError **error);
gboolean mesh_close_checked(FILE *f, GError **error);

G_END_DECLS

#endif
