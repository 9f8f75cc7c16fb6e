/* io_mesh_ply.c — PLY: ascii, binary_little_endian and binary_big_endian; the vertex element
 * (x, y, z and the first other plain property as a per-vertex value) and the face element's
 * vertex_indices list; other elements are read over. Written binary_little_endian.
 * Any thread. */
#include <stdio.h>
#include <string.h>

#include "io_mesh_private.h"

enum { PLY_MAX_ELEMENTS = 16, PLY_MAX_PROPS = 32 };
static const struct {
  const char *name, *alias;
  int size;
} ply_types[] = {{"char", "int8", 1},     {"uchar", "uint8", 1},   {"short", "int16", 2},
                 {"ushort", "uint16", 2}, {"int", "int32", 4},     {"uint", "uint32", 4},
                 {"float", "float32", 4}, {"double", "float64", 8}};

typedef struct {
  char name[64];
  int type;       /* index into ply_types */
  int count_type; /* list length type, or -1 for a scalar property */
} PlyProp;

typedef struct {
  char name[64];
  gint64 count;
  int n_props;
  PlyProp props[PLY_MAX_PROPS];
} PlyElement;

typedef struct {
  Cursor *c;
  int format; /* 0 ascii, 1 binary little endian, 2 binary big endian */
  int n_elements;
  PlyElement elements[PLY_MAX_ELEMENTS];
} Ply;

static int ply_type(const char *name)
{
  for (int i = 0; i < (int)G_N_ELEMENTS(ply_types); i++)
    if (strcmp(name, ply_types[i].name) == 0 || strcmp(name, ply_types[i].alias) == 0)
      return i;
  return -1;
}

static gboolean ply_value(Ply *p, int type, double *out, GError **error)
{
  if (p->format == 0)
    return mesh_read_ascii(p->c, out, "a number", error);
  int size = ply_types[type].size;
  if (mesh_left(p->c) < (gsize)size)
    return mesh_fail(error, p->c, "truncated binary data");
  guint8 b[8];
  for (int i = 0; i < size; i++) /* to host (little-endian) byte order */
    b[i] = p->format == 1 ? p->c->p[i] : p->c->p[size - 1 - i];
  p->c->p += size;
  union {
    gint8 i8;
    guint8 u8;
    gint16 i16;
    guint16 u16;
    gint32 i32;
    guint32 u32;
    float f;
    double d;
  } u;
  memcpy(&u, b, (gsize)size);
#if G_BYTE_ORDER == G_BIG_ENDIAN
#error "PLY binary reading assumes a little-endian host"
#endif
  switch (type) {
  case 0:
    *out = u.i8;
    break;
  case 1:
    *out = u.u8;
    break;
  case 2:
    *out = u.i16;
    break;
  case 3:
    *out = u.u16;
    break;
  case 4:
    *out = u.i32;
    break;
  case 5:
    *out = u.u32;
    break;
  case 6:
    *out = u.f;
    break;
  default:
    *out = u.d;
    break;
  }
  return TRUE;
}

static gboolean ply_property_line(Ply *p, const char *line, GError **error)
{
  if (p->n_elements == 0)
    return mesh_fail(error, p->c, "PLY property before any element");
  PlyElement *e = &p->elements[p->n_elements - 1];
  if (e->n_props == PLY_MAX_PROPS)
    return mesh_fail(error, p->c, "PLY element \"%s\" has more than %d properties", e->name,
                PLY_MAX_PROPS);
  PlyProp *q = &e->props[e->n_props];
  char t1[32] = "", t2[32] = "";
  if (sscanf(line, "property list %31s %31s %63s", t1, t2, q->name) == 3) {
    q->count_type = ply_type(t1);
    q->type = ply_type(t2);
    if (q->count_type < 0 || q->count_type >= 6)
      return mesh_fail(error, p->c, "bad PLY list length type in \"%s\"", line);
  } else if (sscanf(line, "property %31s %63s", t1, q->name) == 2) {
    q->count_type = -1;
    q->type = ply_type(t1);
  } else {
    return mesh_fail(error, p->c, "bad PLY line \"%s\"", line);
  }
  if (q->type < 0)
    return mesh_fail(error, p->c, "unknown PLY type in \"%s\"", line);
  e->n_props++;
  return TRUE;
}

static gboolean ply_header(Ply *p, GError **error)
{
  g_autofree char *magic = mesh_next_line(p->c);
  for (;;) {
    g_autofree char *line = mesh_next_line(p->c);
    if (line == NULL)
      return mesh_fail(error, p->c, "truncated PLY header (no end_header)");
    char word[64] = "";
    gint64 count = 0;
    if (strcmp(line, "end_header") == 0)
      return TRUE;
    if (g_str_has_prefix(line, "format ")) {
      if (sscanf(line, "format %63s", word) != 1)
        return mesh_fail(error, p->c, "bad PLY line \"%s\"", line);
      p->format = strcmp(word, "ascii") == 0                  ? 0
                  : strcmp(word, "binary_little_endian") == 0 ? 1
                  : strcmp(word, "binary_big_endian") == 0    ? 2
                                                              : -1;
      if (p->format < 0)
        return mesh_fail(error, p->c, "unknown PLY format \"%s\"", word);
    } else if (g_str_has_prefix(line, "element ")) {
      if (p->n_elements == PLY_MAX_ELEMENTS)
        return mesh_fail(error, p->c, "more than %d PLY elements", PLY_MAX_ELEMENTS);
      PlyElement *e = &p->elements[p->n_elements];
      if (sscanf(line, "element %63s %" G_GINT64_FORMAT, e->name, &count) != 2 || count < 0 ||
          count > G_MAXINT32 / 3)
        return mesh_fail(error, p->c, "bad PLY line \"%s\"", line);
      e->count = count;
      e->n_props = 0;
      p->n_elements++;
    } else if (g_str_has_prefix(line, "property ")) {
      if (!ply_property_line(p, line, error))
        return FALSE;
    } /* comment, obj_info: ignored */
  }
}

static int ply_find(const PlyElement *e, const char *name)
{
  for (int i = 0; i < e->n_props; i++)
    if (strcmp(e->props[i].name, name) == 0)
      return i;
  return -1;
}

/* The scalar shown as a colour: the first plain vertex property that is not geometry,
 * normal, colour or texture coordinate. */
static int ply_scalar_property(const PlyElement *e)
{
  static const char *known[] = {"x",    "y",     "z", "nx", "ny", "nz", "red",       "green",
                                "blue", "alpha", "u", "v",  "s",  "t",  "texture_u", "texture_v"};
  for (int i = 0; i < e->n_props; i++) {
    gboolean is_known = e->props[i].count_type >= 0;
    for (gsize k = 0; k < G_N_ELEMENTS(known) && !is_known; k++)
      is_known = strcmp(e->props[i].name, known[k]) == 0;
    if (!is_known)
      return i;
  }
  return -1;
}

/* One element row: scalars into row[prop]; the `keep_list` list property into ids. */
static gboolean ply_row(Ply *p, const PlyElement *e, double *row, int keep_list, GArray *ids,
                        GError **error)
{
  for (int i = 0; i < e->n_props; i++) {
    const PlyProp *q = &e->props[i];
    if (q->count_type < 0) {
      if (!ply_value(p, q->type, &row[i], error))
        return FALSE;
      continue;
    }
    double m;
    if (!ply_value(p, q->count_type, &m, error))
      return FALSE;
    if (!mesh_whole(m, (double)mesh_left(p->c)))
      return mesh_fail(error, p->c, "PLY list \"%s\" has a bad length %g", q->name, m);
    if (i == keep_list)
      g_array_set_size(ids, 0);
    for (gint64 k = 0; k < (gint64)m; k++) {
      double x;
      if (!ply_value(p, q->type, &x, error))
        return FALSE;
      guint32 id;
      if (i == keep_list) {
        if (!mesh_vertex_index(p->c, x, "a PLY face", &id, error))
          return FALSE;
        g_array_append_val(ids, id);
      }
    }
  }
  return TRUE;
}

static gboolean ply_element(Ply *p, const PlyElement *e, Builder *b, GError **error)
{
  gsize min_row = 0;
  for (int i = 0; i < e->n_props; i++)
    min_row +=
        (gsize)ply_types[e->props[i].count_type >= 0 ? e->props[i].count_type : e->props[i].type]
            .size;
  if (!mesh_need(p->c, e->count, p->format == 0 ? 1 : MAX(min_row, 1), e->name, error))
    return FALSE;
  gboolean is_vertex = strcmp(e->name, "vertex") == 0, is_face = strcmp(e->name, "face") == 0;
  int ix = ply_find(e, "x"), iy = ply_find(e, "y"), iz = ply_find(e, "z");
  int is = ply_scalar_property(e);
  int list = ply_find(e, "vertex_indices");
  if (list < 0)
    list = ply_find(e, "vertex_index");
  if (is_vertex && (ix < 0 || iy < 0 || iz < 0 || e->props[ix].count_type >= 0))
    return mesh_fail(error, p->c, "PLY vertex element without x, y, z");
  if (is_face && (list < 0 || e->props[list].count_type < 0))
    return mesh_fail(error, p->c, "PLY face element without a vertex_indices list");
  if (is_vertex && is >= 0)
    b->scalars = g_array_sized_new(FALSE, FALSE, sizeof(float), (guint)e->count);
  double row[PLY_MAX_PROPS];
  g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(guint32));
  for (gint64 r = 0; r < e->count; r++) {
    if (!ply_row(p, e, row, is_face ? list : -1, ids, error))
      return FALSE;
    if (is_vertex) {
      float xyz[3] = {(float)row[ix], (float)row[iy], (float)row[iz]};
      g_array_append_vals(b->vertices, xyz, 3);
      if (is >= 0) {
        float f = (float)row[is];
        g_array_append_val(b->scalars, f);
      }
    } else if (is_face) {
      mesh_add_polygon(b, (const guint32 *)ids->data, ids->len);
    }
  }
  return TRUE;
}

NwSurface *nw_mesh_read_ply(Cursor *c, GError **error)
{
  g_autofree Ply *p = g_new0(Ply, 1);
  p->c = c;
  p->format = -1;
  if (!ply_header(p, error))
    return NULL;
  if (p->format < 0)
    return mesh_fail(error, c, "PLY header without a format line"), NULL;
  Builder b;
  mesh_builder_init(&b);
  for (int i = 0; i < p->n_elements; i++)
    if (!ply_element(p, &p->elements[i], &b, error)) {
      mesh_builder_clear(&b);
      return NULL;
    }
  return mesh_builder_finish(&b, c->name, error);
}

gboolean nw_mesh_write_ply(const char *tmp_path, gpointer data, GError **error)
{
  const NwSurface *s = data;
  FILE *f = mesh_create(tmp_path, error);
  if (f == NULL)
    return FALSE;
  fprintf(f,
          "ply\nformat binary_little_endian 1.0\ncomment neurowarp: RAS mm\n"
          "element vertex %d\nproperty float x\nproperty float y\nproperty float z\n%s"
          "element face %d\nproperty list uchar int vertex_indices\nend_header\n",
          s->n_vertices, s->scalars ? "property float scalar\n" : "", s->n_triangles);
  for (gsize i = 0; i < (gsize)s->n_vertices; i++) {
    for (int d = 0; d < 3; d++)
      mesh_put_le_float(f, s->vertices[i * 3 + d]);
    if (s->scalars)
      mesh_put_le_float(f, s->scalars[i]);
  }
  for (gsize t = 0; t < (gsize)s->n_triangles; t++) {
    fputc(3, f);
    for (int d = 0; d < 3; d++)
      mesh_put_le32(f, s->triangles[t * 3 + d]);
  }
  return mesh_close_checked(f, error);
}