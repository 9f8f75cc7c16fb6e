/* io_mesh_gifti.c — GIFTI surfaces through giftiio: a POINTSET and a TRIANGLE data array,
 * and the first other array of one value per vertex as scalars; written as gzip-base64 with
 * an identity (scanner RAS) coordinate system. giftiio keeps global state (verbosity, parser
 * buffers), so every call runs under gifti_lock; the document is validated first
 * (io_mesh_gifti_check.c: giftiio crashes on some malformed files). Any thread. */
#include <string.h>

#include "io_mesh_private.h"
#include "nw_error.h"

#ifdef NW_HAVE_GIFTI
#include <gifti_io.h>

#include "input_file.h"
#include "io_mesh_gifti_check.h"
#endif

#ifdef NW_HAVE_GIFTI
/* giftiio keeps global state (verbosity, parser buffers). */
static GMutex gifti_lock;

static gboolean da_type_ok(int t)
{
  return t == NIFTI_TYPE_FLOAT32 || t == NIFTI_TYPE_FLOAT64 || t == NIFTI_TYPE_INT32 ||
         t == NIFTI_TYPE_UINT32 || t == NIFTI_TYPE_INT16 || t == NIFTI_TYPE_UINT16 ||
         t == NIFTI_TYPE_UINT8 || t == NIFTI_TYPE_INT8;
}

static double da_get(const giiDataArray *da, long long i)
{
  switch (da->datatype) {
  case NIFTI_TYPE_FLOAT32:
    return ((const float *)da->data)[i];
  case NIFTI_TYPE_FLOAT64:
    return ((const double *)da->data)[i];
  case NIFTI_TYPE_INT32:
    return ((const gint32 *)da->data)[i];
  case NIFTI_TYPE_UINT32:
    return ((const guint32 *)da->data)[i];
  case NIFTI_TYPE_INT16:
    return ((const gint16 *)da->data)[i];
  case NIFTI_TYPE_UINT16:
    return ((const guint16 *)da->data)[i];
  case NIFTI_TYPE_INT8:
    return ((const gint8 *)da->data)[i];
  default:
    return ((const guint8 *)da->data)[i];
  }
}

/* Element (r, col) of an n x ncol array in either index order. */
static double da_at(const giiDataArray *da, long long r, int col, int ncol)
{
  long long n = da->dims[0];
  return da_get(da, da->ind_ord == GIFTI_IND_ORD_COL_MAJOR ? col * n + r : r * ncol + col);
}

/* n x ncol (ncol 1: a plain list), data present, a type we convert. */
static gboolean da_shape_ok(const giiDataArray *da, int ncol)
{
  int nbyper = 0, swapsize = 0; /* the buffer holds nvals * nbyper bytes */
  if (da == NULL || da->data == NULL || !da_type_ok(da->datatype) ||
      gifti_datatype_sizes(da->datatype, &nbyper, &swapsize) != 0 || nbyper != da->nbyper ||
      da->num_dim < 1 || da->dims[0] < 0 || da->dims[0] > G_MAXINT32 / 3)
    return FALSE;
  if (ncol == 1)
    return (da->num_dim == 1 || (da->num_dim == 2 && da->dims[1] == 1)) && da->nvals == da->dims[0];
  return da->num_dim == 2 && da->dims[1] == ncol && da->nvals == (long long)da->dims[0] * ncol;
}

static gifti_image *gifti_open(const char *path, GError **error)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  GError *local = NULL;
  if (!nw_input_file_check(path, NULL, error))
    return NULL;
  if (!g_file_get_contents(path, &text, &len, &local)) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: cannot read: %s", path, local->message);
    g_error_free(local);
    return NULL;
  }
  gifti_set_verb(0); /* library code does not print: quiet the reader and its XML parser */
  gxml_set_verb(0);
  if (!nw_gifti_check(path, text, len, error))
    return NULL;
  gifti_image *gim = gifti_read_image(path, 1);
  if (gim == NULL)
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: not a readable GIFTI file (corrupt encoded data or bad attributes)", path);
  return gim;
}

/* The first array of n single values that is not geometry: per-vertex data. */
static giiDataArray *gifti_values(gifti_image *gim, long long n)
{
  for (int i = 0; i < gim->numDA; i++) {
    giiDataArray *da = gim->darray[i];
    if (da->intent != NIFTI_INTENT_POINTSET && da->intent != NIFTI_INTENT_TRIANGLE &&
        da_shape_ok(da, 1) && da->dims[0] == n)
      return da;
  }
  return NULL;
}

/* Vertices, triangles (every index checked) and per-vertex values into b. */
static gboolean gifti_fill(Builder *b, const char *path, gifti_image *gim, const giiDataArray *pts,
                           const giiDataArray *tri, GError **error)
{
  long long nv = pts->dims[0], nt = tri->dims[0];
  for (long long r = 0; r < nv; r++)
    for (int d = 0; d < 3; d++) {
      float x = (float)da_at(pts, r, d, 3);
      g_array_append_val(b->vertices, x);
    }
  Cursor c = {.name = path};
  for (long long r = 0; r < nt; r++)
    for (int d = 0; d < 3; d++) {
      guint32 id;
      if (!mesh_vertex_index(&c, da_at(tri, r, d, 3), "a triangle", &id, error))
        return FALSE;
      g_array_append_val(b->triangles, id);
    }
  giiDataArray *val = gifti_values(gim, nv);
  if (val != NULL) {
    b->scalars = g_array_sized_new(FALSE, FALSE, sizeof(float), (guint)nv);
    for (long long r = 0; r < nv; r++) {
      float x = (float)da_get(val, r);
      g_array_append_val(b->scalars, x);
    }
  }
  return TRUE;
}

NwSurface *nw_mesh_read_gifti(const char *path, GError **error)
{
  g_mutex_lock(&gifti_lock);
  gifti_image *gim = gifti_open(path, error);
  if (gim == NULL) {
    g_mutex_unlock(&gifti_lock);
    return NULL;
  }
  giiDataArray *pts = gifti_find_DA(gim, NIFTI_INTENT_POINTSET, 0);
  giiDataArray *tri = gifti_find_DA(gim, NIFTI_INTENT_TRIANGLE, 0);
  Builder b;
  mesh_builder_init(&b);
  gboolean ok = FALSE;
  if (pts == NULL || tri == NULL)
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: no %s data array", path,
                pts == NULL ? "NIFTI_INTENT_POINTSET" : "NIFTI_INTENT_TRIANGLE");
  else if (!da_shape_ok(pts, 3) || !da_shape_ok(tri, 3))
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: the %s array is not an N x 3 array of numbers",
                path, da_shape_ok(pts, 3) ? "triangle" : "point set");
  else
    ok = gifti_fill(&b, path, gim, pts, tri, error);
  gifti_free_image(gim);
  g_mutex_unlock(&gifti_lock);
  if (!ok) {
    mesh_builder_clear(&b);
    return NULL;
  }
  return mesh_builder_finish(&b, path, error);
}

float *nw_mesh_read_gifti_values(const char *path, int n, GError **error)
{
  g_mutex_lock(&gifti_lock);
  gifti_image *gim = gifti_open(path, error);
  float *values = NULL;
  if (gim != NULL) {
    giiDataArray *da = gifti_values(gim, n);
    if (da == NULL) {
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                  "%s: no data array of %d values (one per vertex)", path, n);
    } else {
      values = g_new(float, (gsize)n + 1);
      for (int i = 0; i < n; i++)
        values[i] = (float)da_get(da, i);
    }
    gifti_free_image(gim);
  }
  g_mutex_unlock(&gifti_lock);
  return values;
}

/* Turn array `da` (made by gifti_create_image) into an n x ncol array of `type`. */
static gboolean gifti_shape(giiDataArray *da, int intent, int type, int n, int ncol)
{
  da->intent = intent;
  da->datatype = type;
  da->num_dim = ncol > 1 ? 2 : 1;
  da->dims[0] = n;
  da->dims[1] = ncol > 1 ? ncol : 0;
  da->nbyper = 4;
  da->nvals = (long long)n * ncol;
  da->ind_ord = GIFTI_IND_ORD_ROW_MAJOR;
  da->encoding = GIFTI_ENCODING_B64GZ;
  da->endian = gifti_get_this_endian();
  free(da->data); /* giftiio frees with free() */
  da->data = calloc((size_t)da->nvals + 1, 4);
  return da->data != NULL;
}

gboolean nw_mesh_write_gifti(const char *tmp_path, gpointer data, GError **error)
{
  const NwSurface *s = data;
  int n_da = s->scalars != NULL ? 3 : 2, dims[2] = {1, 3};
  g_mutex_lock(&gifti_lock);
  gifti_set_verb(0);
  gxml_set_verb(0);
  gifti_image *gim =
      gifti_create_image(n_da, NIFTI_INTENT_POINTSET, NIFTI_TYPE_FLOAT32, 2, dims, 1);
  gboolean ok =
      gim != NULL &&
      gifti_shape(gim->darray[0], NIFTI_INTENT_POINTSET, NIFTI_TYPE_FLOAT32, s->n_vertices, 3) &&
      gifti_shape(gim->darray[1], NIFTI_INTENT_TRIANGLE, NIFTI_TYPE_INT32, s->n_triangles, 3) &&
      (n_da < 3 ||
       gifti_shape(gim->darray[2], NIFTI_INTENT_SHAPE, NIFTI_TYPE_FLOAT32, s->n_vertices, 1));
  if (ok) {
    memcpy(gim->darray[0]->data, s->vertices, (size_t)s->n_vertices * 3 * sizeof(float));
    memcpy(gim->darray[1]->data, s->triangles, (size_t)s->n_triangles * 3 * sizeof(guint32));
    if (n_da == 3)
      memcpy(gim->darray[2]->data, s->scalars, (size_t)s->n_vertices * sizeof(float));
    /* Tell other tools the coordinates are scanner RAS mm (identity transform). */
    giiDataArray *pts = gim->darray[0];
    if (gifti_add_empty_CS(pts) == 0 && pts->numCS > 0) {
      giiCoordSystem *cs = pts->coordsys[pts->numCS - 1];
      cs->dataspace = gifti_strdup("NIFTI_XFORM_SCANNER_ANAT");
      cs->xformspace = gifti_strdup("NIFTI_XFORM_SCANNER_ANAT");
      for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++)
          cs->xform[r][c] = r == c;
    }
    ok = gifti_write_image(gim, tmp_path, 1) == 0;
  }
  if (gim != NULL)
    gifti_free_image(gim);
  g_mutex_unlock(&gifti_lock);
  if (!ok)
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "giftiio could not write the GIFTI file");
  return ok;
}
#else
static gboolean no_gifti(const char *path, GError **error)
{
  g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED, "%s: GIFTI unsupported: built without giftiio",
              path);
  return FALSE;
}
NwSurface *nw_mesh_read_gifti(const char *path, GError **error)
{
  no_gifti(path, error);
  return NULL;
}
float *nw_mesh_read_gifti_values(const char *path, int n, GError **error)
{
  no_gifti(path, error);
  return NULL;
}
gboolean nw_mesh_write_gifti(const char *tmp_path, gpointer data, GError **error)
{
  g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED, "GIFTI unsupported: built without giftiio");
  return FALSE;
}
#endif