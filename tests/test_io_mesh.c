/* test_io_mesh.c — mesh files (core/io_mesh.c): write/read round trips in every writable
 * format, hand-made files for every reader (FreeSurfer big-endian with and without the
 * c_ras footer, curv, VTK ASCII and BINARY with quads and strips, PLY ascii / little / big
 * endian, OBJ with v/vt/vn and negative indices, GIFTI XML), and corrupt or truncated
 * files, which must give an error naming the file, never a crash. CPU, main thread. */
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "io_mesh.h"
#include "nw_error.h"
#include "testutil.h"

/* ---- helpers ---- */

static char *put_file(const char *name, const void *data, gsize len)
{
  char *path = nw_test_path(name);
  g_assert_true(g_file_set_contents(path, data, (gssize)len, NULL));
  return path;
}

static char *put_text(const char *name, const char *text)
{
  return put_file(name, text, strlen(text));
}

static void be32(GByteArray *b, guint32 u)
{
  guint8 x[4] = {u >> 24, u >> 16 & 0xff, u >> 8 & 0xff, u & 0xff};
  g_byte_array_append(b, x, 4);
}

static void be_float(GByteArray *b, float f)
{
  guint32 u;
  memcpy(&u, &f, 4);
  be32(b, u);
}

static void text(GByteArray *b, const char *s)
{
  g_byte_array_append(b, (const guint8 *)s, (guint)strlen(s));
}

/* An octahedron (closed, 6 vertices, 8 triangles, counter-clockwise from outside) with
 * coordinates that are not round in binary, and a scalar per vertex. */
static NwSurface *octahedron(gboolean with_scalars)
{
  static const float v[6][3] = {{1.1f, 0, 0},  {-1.1f, 0, 0}, {0, 2.3f, 0},
                                {0, -2.3f, 0}, {0, 0, 3.7f},  {0, 0, -3.7f}};
  static const guint32 t[8][3] = {{0, 2, 4}, {2, 1, 4}, {1, 3, 4}, {3, 0, 4},
                                  {2, 0, 5}, {1, 2, 5}, {3, 1, 5}, {0, 3, 5}};
  NwSurface *s = nw_surface_new(6, 8, NULL);
  for (int i = 0; i < 18; i++)
    s->vertices[i] = ((const float *)v)[i] + 0.123456789f * (float)(i % 3 + 1);
  memcpy(s->triangles, t, sizeof t);
  if (with_scalars) {
    s->scalars = g_new(float, 6);
    for (int i = 0; i < 6; i++)
      s->scalars[i] = -0.5f + 0.3333333f * (float)i;
  }
  return s;
}

static void assert_same_mesh(const NwSurface *a, const NwSurface *b, gboolean scalars)
{
  g_assert_cmpint(a->n_vertices, ==, b->n_vertices);
  g_assert_cmpint(a->n_triangles, ==, b->n_triangles);
  g_assert_cmpmem(a->vertices, a->n_vertices * 3 * sizeof(float), b->vertices,
                  b->n_vertices * 3 * sizeof(float));
  g_assert_cmpmem(a->triangles, a->n_triangles * 3 * sizeof(guint32), b->triangles,
                  b->n_triangles * 3 * sizeof(guint32));
  if (scalars) {
    g_assert_nonnull(b->scalars);
    g_assert_cmpmem(a->scalars, a->n_vertices * sizeof(float), b->scalars,
                    b->n_vertices * sizeof(float));
  }
}

static void assert_vertex(const NwSurface *s, int i, float x, float y, float z)
{
  g_assert_cmpfloat_with_epsilon(s->vertices[i * 3], x, 1e-6);
  g_assert_cmpfloat_with_epsilon(s->vertices[i * 3 + 1], y, 1e-6);
  g_assert_cmpfloat_with_epsilon(s->vertices[i * 3 + 2], z, 1e-6);
}

static void assert_triangles(const NwSurface *s, const guint32 *t, int n)
{
  g_assert_cmpint(s->n_triangles, ==, n);
  g_assert_cmpmem(s->triangles, n * 3 * sizeof(guint32), t, n * 3 * sizeof(guint32));
}

static int count_files(const char *dir)
{
  GDir *d = g_dir_open(dir, 0, NULL);
  int n = 0;
  while (g_dir_read_name(d) != NULL)
    n++;
  g_dir_close(d);
  return n;
}

/* Plain stdio: g_file_set_contents syncs to disk, far too slow for thousands of files. */
static void overwrite(const char *path, const guint8 *data, gsize len)
{
  FILE *f = g_fopen(path, "wb");
  g_assert_nonnull(f);
  g_assert_cmpuint(fwrite(data, 1, len, f), ==, len);
  g_assert_cmpint(fclose(f), ==, 0);
}

/* Proper prefixes of a file (every one up to 64 bytes, then about 120 spread over the rest)
 * and 120 random single-byte corruptions must either be
 * refused with an error that names the file, or (where the format allows a shorter valid
 * reading, e.g. OBJ lines) give a valid mesh. ASan runs this too. */
static void assert_survives_damage(const char *name, const guint8 *data, gsize len,
                                   gboolean prefixes_must_fail)
{
  /* Thousands of small files: on a RAM file system where there is one, since a busy disk
   * makes each truncating open cost milliseconds. */
  g_autofree char *shm = g_strdup("/dev/shm/nwmesh-XXXXXX");
  gboolean in_shm = g_file_test("/dev/shm", G_FILE_TEST_IS_DIR) && g_mkdtemp(shm) != NULL;
  g_autofree char *path = in_shm ? g_build_filename(shm, name, NULL) : nw_test_path(name);
  g_autofree guint8 *buf = g_memdup2(data, len);
  gsize stride = len / 120 + 1; /* about 120 prefixes: every one for small files */
  for (gsize cut = 0; cut < len; cut += cut < 64 ? 1 : stride) {
    overwrite(path, data, cut);
    g_autoptr(GError) error = NULL;
    g_autoptr(NwSurface) s = nw_mesh_read(path, &error);
    if (s == NULL) {
      g_assert_nonnull(error);
      g_assert_true(g_str_has_prefix(error->message, path));
    } else {
      g_assert_false(prefixes_must_fail);
      g_assert_true(nw_surface_validate(s, path, NULL));
    }
  }
  GRand *r = g_rand_new_with_seed(7);
  for (int k = 0; k < 120; k++) {
    memcpy(buf, data, len);
    gsize at = (gsize)g_rand_int_range(r, 0, (gint32)len);
    buf[at] = (guint8)g_rand_int_range(r, 0, 256);
    overwrite(path, buf, len);
    g_autoptr(GError) error = NULL;
    g_autoptr(NwSurface) s = nw_mesh_read(path, &error);
    if (s == NULL)
      g_assert_true(g_str_has_prefix(error->message, path));
    else
      g_assert_true(nw_surface_validate(s, path, NULL));
  }
  g_rand_free(r);
  if (in_shm) {
    g_unlink(path);
    g_rmdir(shm);
  }
}

/* ---- round trips ---- */

static void round_trip(const char *name, NwMeshFormat expect, gboolean scalars)
{
  g_autoptr(NwSurface) s = octahedron(scalars);
  g_autofree char *path = nw_test_path(name);
  g_assert_cmpint(nw_mesh_format_from_name(path), ==, expect);
  int before = count_files(nw_test_tmpdir());
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_mesh_write(path, s, NW_MESH_AUTO, &error));
  g_assert_no_error(error);
  g_assert_cmpint(count_files(nw_test_tmpdir()), ==, before + 1); /* no temporary left */
  g_autoptr(NwSurface) back = nw_mesh_read(path, &error);
  g_assert_no_error(error);
  assert_same_mesh(s, back, scalars);
  if (!scalars)
    g_assert_null(back->scalars);
}

static void test_round_trip_ply(void)
{
  round_trip("rt.ply", NW_MESH_PLY, TRUE);
  round_trip("rt-plain.ply", NW_MESH_PLY, FALSE);
}

static void test_round_trip_obj(void)
{
  round_trip("rt.obj", NW_MESH_OBJ, FALSE);
}

static void test_round_trip_vtk(void)
{
  round_trip("rt.vtk", NW_MESH_VTK, TRUE);
  round_trip("rt-plain.vtk", NW_MESH_VTK, FALSE);
}

static void test_round_trip_gifti(void)
{
  g_autoptr(NwSurface) s = octahedron(TRUE);
  g_autofree char *path = nw_test_path("rt.surf.gii");
  g_autoptr(GError) error = NULL;
  if (!nw_mesh_write(path, s, NW_MESH_AUTO, &error) &&
      g_error_matches(error, NW_ERROR, NW_ERROR_UNSUPPORTED)) {
    g_assert_nonnull(strstr(error->message, "unsupported: built without giftiio"));
    g_test_skip("built without giftiio");
    return;
  }
  g_assert_no_error(error);
  round_trip("rt.gii", NW_MESH_GIFTI, TRUE);
  round_trip("rt-plain.gii", NW_MESH_GIFTI, FALSE);
  /* the values alone, through nw_mesh_read_scalars */
  g_autoptr(NwSurface) t = octahedron(FALSE);
  g_assert_true(nw_mesh_read_scalars(path, t, &error));
  g_assert_no_error(error);
  g_assert_cmpmem(t->scalars, 6 * sizeof(float), s->scalars, 6 * sizeof(float));
}

/* ---- FreeSurfer ---- */

static GByteArray *freesurfer_tetra(void)
{
  GByteArray *b = g_byte_array_new();
  const guint8 magic[3] = {0xff, 0xff, 0xfe};
  g_byte_array_append(b, magic, 3);
  text(b, "created by test on Sat Nov 21 2026\n\n");
  be32(b, 4);
  be32(b, 4);
  const float v[12] = {10, 20, 30, 11.5f, 20, 30, 10, 21.25f, 30, 10, 20, -31};
  for (int i = 0; i < 12; i++)
    be_float(b, v[i]);
  const guint32 t[12] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
  for (int i = 0; i < 12; i++)
    be32(b, t[i]);
  return b;
}

static const guint32 tetra_triangles[12] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};

static void test_freesurfer(void)
{
  g_autoptr(GByteArray) b = freesurfer_tetra();
  g_autofree char *path = put_file("lh.white", b->data, b->len);
  g_autoptr(GError) error = NULL;
  g_autoptr(NwSurface) s = nw_mesh_read(path, &error);
  g_assert_no_error(error);
  g_assert_cmpint(s->n_vertices, ==, 4);
  assert_vertex(s, 1, 11.5f, 20, 30);
  assert_vertex(s, 3, 10, 20, -31);
  assert_triangles(s, tetra_triangles, 4);

  /* the volume-geometry footer: tkregister RAS + c_ras = scanner RAS */
  const guint8 *base = b->data;
  g_autoptr(GByteArray) f = g_byte_array_new();
  g_byte_array_append(f, base, b->len);
  be32(f, 20);
  text(f, "valid = 1  # volume info valid\nfilename = ../mri/filled-pretess255.mgz\n"
          "volume = 256 256 256\nvoxelsize = 1.0 1.0 1.0\nxras   = -1.0 0.0 0.0\n"
          "yras   = 0.0 0.0 -1.0\nzras   = 0.0 1.0 0.0\ncras   = 1.5 -2.25 10.0\n");
  g_autofree char *path2 = put_file("rh.pial", f->data, f->len);
  g_autoptr(NwSurface) t = nw_mesh_read(path2, &error);
  g_assert_no_error(error);
  assert_vertex(t, 1, 13.0f, 17.75f, 40);
  assert_vertex(t, 3, 11.5f, 17.75f, -21);

  /* the older "2 0 20" tag; and a geometry marked invalid is not applied */
  g_byte_array_set_size(f, b->len);
  be32(f, 2);
  be32(f, 0);
  be32(f, 20);
  text(f, "valid = 0  # volume info invalid\ncras   = 100 100 100\n");
  g_autofree char *path3 = put_file("lh.orig", f->data, f->len);
  g_autoptr(NwSurface) u = nw_mesh_read(path3, &error);
  g_assert_no_error(error);
  assert_vertex(u, 1, 11.5f, 20, 30);

  assert_survives_damage("damaged.white", b->data, b->len, TRUE);
}

static void test_freesurfer_errors(void)
{
  g_autoptr(GByteArray) b = freesurfer_tetra();
  g_autoptr(GError) error = NULL;
  /* truncated in the triangles */
  g_autofree char *p1 = put_file("lh.cut", b->data, b->len - 5);
  g_assert_null(nw_mesh_read(p1, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_FORMAT);
  g_autofree char *m1 = g_strdup_printf("%s: truncated: 4 vertices and 4 triangles need 96 "
                                        "bytes, 91 left",
                                        p1);
  g_assert_cmpstr(error->message, ==, m1);
  g_clear_error(&error);
  /* an absurd vertex count is refused before any allocation */
  const gsize counts = 3 + strlen("created by test on Sat Nov 21 2026\n\n");
  b->data[counts] = 0x7f;
  g_autofree char *p2 = put_file("lh.huge", b->data, b->len);
  g_assert_null(nw_mesh_read(p2, &error));
  g_assert_nonnull(strstr(error->message, "invalid vertices count"));
  g_clear_error(&error);
  b->data[counts] = 0;
  /* a triangle index out of range */
  b->data[b->len - 1] = 9;
  g_autofree char *p3 = put_file("lh.bad", b->data, b->len);
  g_assert_null(nw_mesh_read(p3, &error));
  g_autofree char *m3 =
      g_strdup_printf("%s: triangle 3 refers to vertex 9, out of range (4 vertices)", p3);
  g_assert_cmpstr(error->message, ==, m3);
}

static void test_freesurfer_curv(void)
{
  g_autoptr(NwSurface) s = octahedron(FALSE);
  g_autoptr(GByteArray) b = g_byte_array_new();
  const guint8 magic[3] = {0xff, 0xff, 0xff};
  g_byte_array_append(b, magic, 3);
  be32(b, 6);
  be32(b, 8);
  be32(b, 1);
  for (int i = 0; i < 6; i++)
    be_float(b, 0.25f * (float)i - 0.5f);
  g_autofree char *path = put_file("lh.curv", b->data, b->len);
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_mesh_read_scalars(path, s, &error));
  g_assert_no_error(error);
  g_assert_cmpfloat(s->scalars[0], ==, -0.5f);
  g_assert_cmpfloat(s->scalars[5], ==, 0.75f);
  /* a surface reader refuses it with a message that says what it is */
  g_assert_null(nw_mesh_read(path, &error));
  g_assert_nonnull(strstr(error->message, "a FreeSurfer per-vertex value file, not a surface"));
  g_clear_error(&error);
  /* count mismatch, truncation */
  g_autoptr(NwSurface) small = nw_surface_new(5, 1, NULL);
  g_assert_false(nw_mesh_read_scalars(path, small, &error));
  g_assert_nonnull(strstr(error->message, "6 values for a mesh of 5 vertices"));
  g_clear_error(&error);
  g_autofree char *cut = put_file("lh.thickness", b->data, b->len - 2);
  g_assert_false(nw_mesh_read_scalars(cut, s, &error));
  g_assert_nonnull(strstr(error->message, "truncated: 6 values need 24 bytes, 22 left"));
}

/* ---- VTK ---- */

/* A unit square as a quad (fanned into 2 triangles) and a strip of 4 points (2 triangles,
 * the second reversed), plus ignored LINES and VERTICES, and SCALARS. */
static const char vtk_ascii[] =
    "# vtk DataFile Version 3.0\nhand made\nASCII\nDATASET POLYDATA\n"
    "POINTS 6 float\n0 0 0  1 0 0  1 1 0\n0 1 0  0 2 0  1 2 0\n"
    "VERTICES 1 2\n1 0\nLINES 1 3\n2 0 1\n"
    "POLYGONS 1 5\n4 0 1 2 3\n"
    "TRIANGLE_STRIPS 1 5\n4 3 2 4 5\n"
    "POINT_DATA 6\nSCALARS thickness float 1\nLOOKUP_TABLE default\n0.5 1 1.5 2 2.5 3\n";
static const guint32 vtk_triangles[12] = {0, 1, 2, 0, 2, 3, 3, 2, 4, 4, 2, 5};

static void test_vtk_ascii(void)
{
  g_autofree char *path = put_text("hand.vtk", vtk_ascii);
  g_autoptr(GError) error = NULL;
  g_autoptr(NwSurface) s = nw_mesh_read(path, &error);
  g_assert_no_error(error);
  g_assert_cmpint(s->n_vertices, ==, 6);
  assert_vertex(s, 5, 1, 2, 0);
  assert_triangles(s, vtk_triangles, 4);
  g_assert_nonnull(s->scalars);
  g_assert_cmpfloat(s->scalars[4], ==, 2.5f);
  assert_survives_damage("damaged.vtk", (const guint8 *)vtk_ascii, sizeof vtk_ascii - 1, FALSE);
}

static GByteArray *vtk_binary(void)
{
  GByteArray *b = g_byte_array_new();
  text(b, "# vtk DataFile Version 3.0\nbinary\nBINARY\nDATASET POLYDATA\nPOINTS 4 float\n");
  const float v[12] = {0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2};
  for (int i = 0; i < 12; i++)
    be_float(b, v[i] + 0.1f);
  text(b, "\nPOLYGONS 2 8\n");
  const guint32 c[8] = {3, 0, 2, 1, 3, 0, 1, 3};
  for (int i = 0; i < 8; i++)
    be32(b, c[i]);
  text(b, "\nTRIANGLE_STRIPS 1 4\n");
  const guint32 st[4] = {3, 0, 3, 2};
  for (int i = 0; i < 4; i++)
    be32(b, st[i]);
  text(b, "\n");
  return b;
}

static void test_vtk_binary(void)
{
  g_autoptr(GByteArray) b = vtk_binary();
  g_autofree char *path = put_file("bin.vtk", b->data, b->len);
  g_autoptr(GError) error = NULL;
  g_autoptr(NwSurface) s = nw_mesh_read(path, &error);
  g_assert_no_error(error);
  assert_vertex(s, 1, 2.1f, 0.1f, 0.1f);
  const guint32 t[9] = {0, 2, 1, 0, 1, 3, 0, 3, 2};
  assert_triangles(s, t, 3);
  g_assert_null(s->scalars);
  assert_survives_damage("damaged-bin.vtk", b->data, b->len, FALSE);
}

/* VTK 5.1 (what VTK 9 writes): OFFSETS and CONNECTIVITY arrays, ASCII and BINARY. */
static const char vtk51_ascii[] =
    "# vtk DataFile Version 5.1\nvtk 9\nASCII\nDATASET POLYDATA\n"
    "POINTS 5 float\n0 0 0 1 0 0 1 1 0 0 1 0 0.5 0.5 1\n"
    "POLYGONS 3 7\nOFFSETS vtktypeint64\n0 4 7\nCONNECTIVITY vtktypeint64\n0 1 2 3 4 1 0\n";

static void test_vtk_51(void)
{
  g_autofree char *path = put_text("v51.vtk", vtk51_ascii);
  g_autoptr(GError) error = NULL;
  g_autoptr(NwSurface) s = nw_mesh_read(path, &error);
  g_assert_no_error(error);
  const guint32 t[9] = {0, 1, 2, 0, 2, 3, 4, 1, 0};
  assert_triangles(s, t, 3);
  assert_vertex(s, 4, 0.5f, 0.5f, 1);
  assert_survives_damage("damaged51.vtk", (const guint8 *)vtk51_ascii, sizeof vtk51_ascii - 1,
                         FALSE);

  g_autoptr(GByteArray) b = g_byte_array_new();
  text(b, "# vtk DataFile Version 5.1\nvtk 9\nBINARY\nDATASET POLYDATA\nPOINTS 3 float\n");
  for (int i = 0; i < 9; i++)
    be_float(b, i == 3 || i == 7 ? 1.0f : 0.0f);
  text(b, "\nPOLYGONS 2 3\nOFFSETS vtktypeint64\n");
  const guint32 off[4] = {0, 0, 0, 3};
  for (int i = 0; i < 4; i++)
    be32(b, off[i]);
  text(b, "\nCONNECTIVITY vtktypeint64\n");
  for (int i = 0; i < 3; i++) {
    be32(b, 0);
    be32(b, (guint32)i);
  }
  text(b, "\n");
  g_autofree char *p2 = put_file("v51bin.vtk", b->data, b->len);
  g_autoptr(NwSurface) u = nw_mesh_read(p2, &error);
  g_assert_no_error(error);
  const guint32 t2[3] = {0, 1, 2};
  assert_triangles(u, t2, 1);
  assert_vertex(u, 2, 0, 1, 0);
  assert_survives_damage("damaged51bin.vtk", b->data, b->len, FALSE);

  /* offsets that do not end at the connectivity size */
  g_auto(GStrv) parts = g_strsplit(vtk51_ascii, "0 4 7", -1);
  g_autofree char *bad = g_strjoinv("0 4 6", parts);
  g_autofree char *p3 = put_text("bad51.vtk", bad);
  g_assert_null(nw_mesh_read(p3, &error));
  g_assert_nonnull(strstr(error->message, "POLYGONS: offsets run from 0 to 6, not 0 to 7"));
  g_clear_error(&error);
  /* an offset past the end before the last one: refused before any read beyond it */
  g_auto(GStrv) parts2 = g_strsplit(vtk51_ascii, "0 4 7", -1);
  g_autofree char *bad2 = g_strjoinv("0 400 7", parts2);
  g_autofree char *p4 = put_text("bad51b.vtk", bad2);
  g_assert_null(nw_mesh_read(p4, &error));
  g_assert_nonnull(strstr(error->message, "offset 400 of cell 0 is out of order or past the 7"));
}

static void test_vtk_errors(void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *p1 = put_text("grid.vtk", "# vtk DataFile Version 3.0\nx\nASCII\n"
                                             "DATASET STRUCTURED_POINTS\n");
  g_assert_null(nw_mesh_read(p1, &error));
  g_assert_nonnull(strstr(error->message, "only DATASET POLYDATA"));
  g_clear_error(&error);
  g_autofree char *p2 = put_text("huge.vtk", "# vtk DataFile Version 3.0\nx\nBINARY\n"
                                             "DATASET POLYDATA\nPOINTS 100000000 float\n");
  g_assert_null(nw_mesh_read(p2, &error));
  g_autofree char *m2 = g_strdup_printf("%s: truncated: 100000000 points need 1200000000 "
                                        "bytes, 0 left",
                                        p2);
  g_assert_cmpstr(error->message, ==, m2);
  g_clear_error(&error);
  g_autofree char *p3 = put_text("badcell.vtk", "# vtk DataFile Version 3.0\nx\nASCII\n"
                                                "DATASET POLYDATA\nPOINTS 3 float\n0 0 0 1 0 0 "
                                                "0 1 0\nPOLYGONS 1 4\n5 0 1 2\n");
  g_assert_null(nw_mesh_read(p3, &error));
  g_assert_nonnull(strstr(error->message, "POLYGONS cell 0 has a bad vertex count 5"));
  g_clear_error(&error);
  g_autofree char *p4 = put_text("nan.vtk", "# vtk DataFile Version 3.0\nx\nASCII\n"
                                            "DATASET POLYDATA\nPOINTS 3 float\n0 0 0 1 zero 0 "
                                            "0 1 0\nPOLYGONS 1 4\n3 0 1 2\n");
  g_assert_null(nw_mesh_read(p4, &error));
  g_assert_nonnull(strstr(error->message, "expected a number, found \"zero"));
}

/* ---- PLY ---- */

static const char ply_ascii[] =
    "ply\nformat ascii 1.0\ncomment hand made\nelement vertex 5\nproperty float x\n"
    "property float y\nproperty float z\nproperty uchar red\nproperty float quality\n"
    "element face 2\nproperty list uchar int vertex_indices\nend_header\n"
    "0 0 0 255 0.5\n1 0 0 0 1.5\n1 1 0 0 2.5\n0 1 0 0 3.5\n0.5 0.5 -2 0 4.5\n"
    "4 0 1 2 3\n3 4 1 0\n";

static void test_ply_ascii(void)
{
  g_autofree char *path = put_text("hand.ply", ply_ascii);
  g_autoptr(GError) error = NULL;
  g_autoptr(NwSurface) s = nw_mesh_read(path, &error);
  g_assert_no_error(error);
  assert_vertex(s, 4, 0.5f, 0.5f, -2);
  const guint32 t[9] = {0, 1, 2, 0, 2, 3, 4, 1, 0};
  assert_triangles(s, t, 3);
  g_assert_cmpfloat(s->scalars[3], ==, 3.5f); /* "quality", not the colour */
  assert_survives_damage("damaged.ply", (const guint8 *)ply_ascii, sizeof ply_ascii - 1, FALSE);
}

/* Binary little or big endian, with a double coordinate, an int16 list length type and an
 * extra "edge" element that must be skipped. */
static GByteArray *ply_binary(gboolean big)
{
  GByteArray *b = g_byte_array_new();
  text(b, big ? "ply\nformat binary_big_endian 1.0\n" : "ply\nformat binary_little_endian 1.0\n");
  text(b, "element vertex 3\nproperty float x\nproperty double y\nproperty float z\n"
          "element edge 1\nproperty int vertex1\nproperty int vertex2\n"
          "element face 1\nproperty uchar flags\nproperty list short uint vertex_index\n"
          "end_header\n");
  const double v[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9.5};
  for (int i = 0; i < 3; i++)
    for (int d = 0; d < 3; d++) {
      guint8 raw[8];
      int size = d == 1 ? 8 : 4;
      if (d == 1)
        memcpy(raw, &v[i * 3 + d], 8);
      else {
        float f = (float)v[i * 3 + d];
        memcpy(raw, &f, 4);
      }
      for (int k = 0; k < size; k++) /* the host is little-endian */
        g_byte_array_append(b, &raw[big ? size - 1 - k : k], 1);
    }
  const guint8 edge_le[8] = {0, 0, 0, 0, 1, 0, 0, 0}, edge_be[8] = {0, 0, 0, 0, 0, 0, 0, 1};
  g_byte_array_append(b, big ? edge_be : edge_le, 8);
  const guint8 face_le[15] = {7, 3, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
  const guint8 face_be[15] = {7, 0, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0};
  g_byte_array_append(b, big ? face_be : face_le, 15);
  return b;
}

static void test_ply_binary(void)
{
  for (int big = 0; big <= 1; big++) {
    g_autoptr(GByteArray) b = ply_binary(big);
    g_autofree char *path = put_file(big ? "be.ply" : "le.ply", b->data, b->len);
    g_autoptr(GError) error = NULL;
    g_autoptr(NwSurface) s = nw_mesh_read(path, &error);
    g_assert_no_error(error);
    assert_vertex(s, 2, 7, 8, 9.5f);
    const guint32 t[3] = {2, 1, 0};
    assert_triangles(s, t, 1);
    assert_survives_damage(big ? "damaged-be.ply" : "damaged-le.ply", b->data, b->len, TRUE);
  }
}

static void test_ply_errors(void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *p1 = put_text("range.ply", "ply\nformat ascii 1.0\nelement vertex 3\n"
                                              "property float x\nproperty float y\nproperty "
                                              "float z\nelement face 1\nproperty list uchar int "
                                              "vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n"
                                              "3 0 1 3\n");
  g_assert_null(nw_mesh_read(p1, &error));
  g_autofree char *m1 =
      g_strdup_printf("%s: triangle 0 refers to vertex 3, out of range (3 vertices)", p1);
  g_assert_cmpstr(error->message, ==, m1);
  g_clear_error(&error);
  g_autofree char *p2 = put_text("noxyz.ply", "ply\nformat ascii 1.0\nelement vertex 1\n"
                                              "property float x\nend_header\n0\n");
  g_assert_null(nw_mesh_read(p2, &error));
  g_assert_nonnull(strstr(error->message, "PLY vertex element without x, y, z"));
  g_clear_error(&error);
  g_autofree char *p3 = put_text("fmt.ply", "ply\nformat binary_middle_endian 1.0\n"
                                            "end_header\n");
  g_assert_null(nw_mesh_read(p3, &error));
  g_assert_nonnull(strstr(error->message, "unknown PLY format \"binary_middle_endian\""));
}

/* ---- OBJ ---- */

static const char obj_text[] =
    "# hand made\nmtllib x.mtl\no thing\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"
    "vt 0 0\nvt 1 0\nvt 1 1\nvn 0 0 1\ng side\nusemtl red\ns off\n"
    "f 1/1/1 2/2/1 3/3/1 4/1/1\n" /* quad with v/vt/vn: fanned */
    "v 0.5 0.5 1.25\n"
    "f -1//1 -4//1 -5//1\n" /* negative: 5, 2, 1 */
    "f 2/1 3/2 5/3\n";      /* v/vt */
static const guint32 obj_triangles[12] = {0, 1, 2, 0, 2, 3, 4, 1, 0, 1, 2, 4};

static void test_obj(void)
{
  g_autofree char *path = put_text("hand.obj", obj_text);
  g_autoptr(GError) error = NULL;
  g_autoptr(NwSurface) s = nw_mesh_read(path, &error);
  g_assert_no_error(error);
  g_assert_cmpint(s->n_vertices, ==, 5);
  assert_vertex(s, 4, 0.5f, 0.5f, 1.25f);
  assert_triangles(s, obj_triangles, 4);
  assert_survives_damage("damaged.obj", (const guint8 *)obj_text, sizeof obj_text - 1, FALSE);

  g_autofree char *p2 = put_text("bad.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf -1 -2 -4\n");
  g_assert_null(nw_mesh_read(p2, &error));
  g_autofree char *m2 =
      g_strdup_printf("%s: line 5: face vertex -4 out of range (3 vertices so far)", p2);
  g_assert_cmpstr(error->message, ==, m2);
  g_clear_error(&error);
  g_autofree char *p3 = put_text("zero.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n");
  g_assert_null(nw_mesh_read(p3, &error));
  g_assert_nonnull(strstr(error->message, "line 4: face vertex 0 out of range"));
  g_clear_error(&error);
  g_autofree char *p4 = put_text("short.obj", "v 0 0\n");
  g_assert_null(nw_mesh_read(p4, &error));
  g_assert_nonnull(strstr(error->message, "line 1: vertex needs three coordinates"));
}

/* ---- GIFTI ---- */

static const char gifti_text[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<GIFTI Version=\"1.0\" NumberOfDataArrays=\"2\">\n"
    "<DataArray Intent=\"NIFTI_INTENT_POINTSET\" DataType=\"NIFTI_TYPE_FLOAT32\" "
    "ArrayIndexingOrder=\"ColumnMajorOrder\" Dimensionality=\"2\" Dim0=\"4\" Dim1=\"3\" "
    "Encoding=\"ASCII\" Endian=\"LittleEndian\" ExternalFileName=\"\" ExternalFileOffset=\"\">\n"
    "<Data>0 1 0 0.5  0 0 1 0.5  0 0 0 2</Data>\n</DataArray>\n"
    "<DataArray Intent=\"NIFTI_INTENT_TRIANGLE\" DataType=\"NIFTI_TYPE_INT32\" "
    "ArrayIndexingOrder=\"RowMajorOrder\" Dimensionality=\"2\" Dim0=\"4\" Dim1=\"3\" "
    "Encoding=\"ASCII\" Endian=\"LittleEndian\" ExternalFileName=\"\" ExternalFileOffset=\"\">\n"
    "<Data>0 2 1 0 1 3 0 3 2 1 2 3</Data>\n</DataArray>\n</GIFTI>\n";

static void test_gifti_hand_made(void)
{
  g_autofree char *path = put_text("hand.gii", gifti_text);
  g_autoptr(GError) error = NULL;
  g_autoptr(NwSurface) s = nw_mesh_read(path, &error);
  if (g_error_matches(error, NW_ERROR, NW_ERROR_UNSUPPORTED)) {
    g_test_skip("built without giftiio");
    return;
  }
  g_assert_no_error(error);
  /* column-major: x = (0 1 0 0.5), y = (0 0 1 0.5), z = (0 0 0 2) */
  assert_vertex(s, 1, 1, 0, 0);
  assert_vertex(s, 3, 0.5f, 0.5f, 2);
  assert_triangles(s, tetra_triangles, 4);

  g_autofree char *p2 = put_file("cut.gii", gifti_text, sizeof gifti_text / 2);
  g_assert_null(nw_mesh_read(p2, &error));
  g_autofree char *m2 = g_strdup_printf("%s: not a readable GIFTI file: ", p2);
  g_assert_true(g_str_has_prefix(error->message, m2));
  g_clear_error(&error);
  /* a triangle index out of range */
  g_autofree char *bad = g_strdup(gifti_text);
  char *at = strstr(bad, "1 2 3</Data>");
  at[4] = '7';
  g_autofree char *p3 = put_text("range.gii", bad);
  g_assert_null(nw_mesh_read(p3, &error));
  g_autofree char *m3 =
      g_strdup_printf("%s: triangle 3 refers to vertex 7, out of range (4 vertices)", p3);
  g_assert_cmpstr(error->message, ==, m3);
  g_clear_error(&error);
  /* no triangles */
  g_auto(GStrv) parts = g_strsplit(gifti_text, "NIFTI_INTENT_TRIANGLE", -1);
  g_autofree char *pts = g_strjoinv("NIFTI_INTENT_SHAPE", parts);
  g_autofree char *p4 = put_text("points.gii", pts);
  g_assert_null(nw_mesh_read(p4, &error));
  g_assert_nonnull(strstr(error->message, "no NIFTI_INTENT_TRIANGLE data array"));
}

/* ---- nibabel, the independent reader and writer ---- */

/* Run the system Python on a script with one argument; FALSE (the test skipped) when there
 * is no Python with nibabel. */
static gboolean run_nibabel(const char *script, const char *arg, char **out)
{
  const char *python = NW_PYTHON3;
  if (!g_file_test(python, G_FILE_TEST_IS_EXECUTABLE)) {
    g_test_skip("no system python3 (NW_PYTHON3)");
    return FALSE;
  }
  const char *argv[] = {python, "-c", script, arg, NULL};
  g_autofree char *err = NULL;
  int status = 0;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, &err,
                             &status, NULL));
  if (!g_spawn_check_wait_status(status, NULL)) {
    if (strstr(err, "No module named") != NULL) {
      g_test_skip("nibabel is not installed");
      return FALSE;
    }
    g_error("python failed: %s", err);
  }
  return TRUE;
}

/* Whitespace-separated numbers of one output line. */
static double *numbers(const char *line, int *n)
{
  g_auto(GStrv) tok = g_strsplit_set(line, " \t", -1);
  double *x = g_new(double, g_strv_length(tok) + 1);
  *n = 0;
  for (int i = 0; tok[i] != NULL; i++)
    if (tok[i][0] != '\0')
      x[(*n)++] = g_ascii_strtod(tok[i], NULL);
  return x;
}

/* nibabel writes a FreeSurfer surface with its volume geometry; we must add c_ras. */
static void test_nibabel_freesurfer(void)
{
  g_autofree char *path = nw_test_path("lh.nibabel");
  g_autofree char *out = NULL;
  if (!run_nibabel(
          "import sys, numpy as np, nibabel.freesurfer.io as fio\n"
          "c = np.array([[10, 20, 30], [11.5, 20, 30], [10, 21.25, 30], [10, 20, -31]], 'f4')\n"
          "f = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]], 'i4')\n"
          "vi = dict(head=np.array([2, 0, 20]), valid='1  # volume info valid',\n"
          "          filename='vol.mgz', volume=np.array([256, 256, 256]),\n"
          "          voxelsize=np.array([1., 1., 1.]), xras=np.array([-1., 0, 0]),\n"
          "          yras=np.array([0, 0, -1.]), zras=np.array([0, 1., 0]),\n"
          "          cras=np.array([1.5, -2.25, 10.]))\n"
          "fio.write_geometry(sys.argv[1], c, f, volume_info=vi)\n",
          path, &out))
    return;
  g_autoptr(GError) error = NULL;
  g_autoptr(NwSurface) s = nw_mesh_read(path, &error);
  g_assert_no_error(error);
  assert_vertex(s, 0, 11.5f, 17.75f, 40);
  assert_vertex(s, 2, 11.5f, 19.0f, 40);
  assert_triangles(s, tetra_triangles, 4);
}

/* Our GIFTI read by nibabel, and nibabel's (base64 + gzip, with a DOCTYPE) read by us. */
static void test_nibabel_gifti(void)
{
  g_autoptr(NwSurface) s = octahedron(TRUE);
  g_autofree char *ours = nw_test_path("ours.gii");
  g_autoptr(GError) error = NULL;
  if (!nw_mesh_write(ours, s, NW_MESH_AUTO, &error)) {
    g_assert_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED);
    g_test_skip("built without giftiio");
    return;
  }
  g_autofree char *out = NULL;
  if (!run_nibabel("import sys, nibabel as nib\n"
                   "g = nib.load(sys.argv[1])\n"
                   "c, f = g.agg_data(('pointset', 'triangle'))\n"
                   "v = g.agg_data('shape')\n"
                   "for a in (c, f, v): print(' '.join('%.9g' % x for x in a.ravel()))\n",
                   ours, &out))
    return;
  g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
  int n;
  g_autofree double *c = numbers(lines[0], &n);
  g_assert_cmpint(n, ==, 18);
  for (int i = 0; i < 18; i++)
    g_assert_cmpfloat((float)c[i], ==, s->vertices[i]);
  g_autofree double *f = numbers(lines[1], &n);
  g_assert_cmpint(n, ==, 24);
  for (int i = 0; i < 24; i++)
    g_assert_cmpfloat(f[i], ==, s->triangles[i]);
  g_autofree double *v = numbers(lines[2], &n);
  g_assert_cmpint(n, ==, 6);
  for (int i = 0; i < 6; i++)
    g_assert_cmpfloat((float)v[i], ==, s->scalars[i]);

  g_autofree char *theirs = nw_test_path("theirs.gii");
  g_autofree char *out2 = NULL;
  g_assert_true(run_nibabel(
      "import sys, numpy as np, nibabel as nib\n"
      "from nibabel.gifti import GiftiImage, GiftiDataArray as DA\n"
      "c = (np.arange(18, dtype='f4').reshape(6, 3) * 0.5 + 0.25)\n"
      "f = np.array([[0,2,4],[2,1,4],[1,3,4],[3,0,4],[2,0,5],[1,2,5],[3,1,5],[0,3,5]], 'i4')\n"
      "g = GiftiImage(darrays=[DA(c, intent='NIFTI_INTENT_POINTSET'),\n"
      "    DA(f, intent='NIFTI_INTENT_TRIANGLE'),\n"
      "    DA(np.linspace(-1, 1, 6).astype('f4'), intent='NIFTI_INTENT_SHAPE')])\n"
      "nib.save(g, sys.argv[1])\n",
      theirs, &out2));
  g_autoptr(NwSurface) t = nw_mesh_read(theirs, &error);
  g_assert_no_error(error);
  g_assert_cmpint(t->n_vertices, ==, 6);
  for (int i = 0; i < 18; i++)
    g_assert_cmpfloat(t->vertices[i], ==, i * 0.5f + 0.25f);
  g_assert_cmpmem(t->triangles, 24 * sizeof(guint32), s->triangles, 24 * sizeof(guint32));
  g_assert_cmpfloat_with_epsilon(t->scalars[5], 1.0, 1e-7);
  g_assert_cmpfloat_with_epsilon(t->scalars[1], -0.6, 1e-7);
}

/* ---- the rest ---- */

static void test_errors(void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *missing = nw_test_path("missing.ply");
  g_assert_null(nw_mesh_read(missing, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_IO);
  g_assert_true(g_str_has_prefix(error->message, missing));
  g_clear_error(&error);
  g_autofree char *p1 = put_text("what.dat", "hello\n");
  g_assert_null(nw_mesh_read(p1, &error));
  g_assert_nonnull(strstr(error->message, "unknown mesh format"));
  g_clear_error(&error);
  g_autoptr(NwSurface) s = octahedron(FALSE);
  g_autofree char *p2 = nw_test_path("out.stl");
  g_assert_false(nw_mesh_write(p2, s, NW_MESH_AUTO, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED);
  g_clear_error(&error);
  g_assert_false(nw_mesh_write(p2, s, NW_MESH_FREESURFER, &error));
  g_assert_nonnull(strstr(error->message, "cannot write meshes as FreeSurfer"));
  g_clear_error(&error);
  g_assert_false(g_file_test(p2, G_FILE_TEST_EXISTS));
  /* writing into a missing folder: an error naming the file, nothing left behind */
  g_autofree char *p3 = nw_test_path("no/such/dir/out.ply");
  g_assert_false(nw_mesh_write(p3, s, NW_MESH_AUTO, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_IO);
  g_assert_true(g_str_has_prefix(error->message, p3));
  g_assert_cmpstr(nw_mesh_format_name(NW_MESH_PLY), ==, "PLY");
  g_assert_cmpint(nw_mesh_format_from_name("/x/lh.pial"), ==, NW_MESH_FREESURFER);
  g_assert_cmpint(nw_mesh_format_from_name("A.SURF.GII"), ==, NW_MESH_GIFTI);
  g_assert_cmpint(nw_mesh_format_from_name("brain.nii"), ==, NW_MESH_AUTO);
}

/* Reading fails with exactly "PATH: reason". */
static void expect_mesh_error(const char *path, const char *reason)
{
  GError *err = NULL;
  g_assert_null(nw_mesh_read(path, &err));
  g_autofree char *want = g_strdup_printf("%s: %s", path, reason);
  g_assert_nonnull(err);
  g_assert_cmpstr(err->message, ==, want);
  g_error_free(err);
}

/* NaN and out-of-range numbers where counts and indices stand (issue 9, point 1): refused
 * with the value, never cast to an integer (a NaN index used to become vertex 0). */
static void test_nan_indices(void)
{
  g_autofree char *vtk = put_text("nan.vtk", "# vtk DataFile Version 3.0\nt\nASCII\n"
                                             "DATASET POLYDATA\nPOINTS 3 float\n0 0 0 1 0 0 0 1 0\n"
                                             "POLYGONS 1 4\n3 0 nan 2\n");
  expect_mesh_error(vtk, "POLYGONS refers to vertex nan");
  g_autofree char *vtk2 = put_text("count.vtk", "# vtk DataFile Version 3.0\nt\nASCII\n"
                                                "DATASET POLYDATA\nPOINTS 3 float\n0 0 0 1 0 0 0 1 0\n"
                                                "POLYGONS 1 4\n1e300 0 1 2\n");
  expect_mesh_error(vtk2, "POLYGONS cell 0 has a bad vertex count 1e+300");
  static const char ply_head[] = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\n"
                                 "property float y\nproperty float z\nelement face 1\n"
                                 "property list %s int vertex_indices\nend_header\n"
                                 "0 0 0\n1 0 0\n0 1 0\n%s\n";
  g_autofree char *t1 = g_strdup_printf(ply_head, "uchar", "nan 0 1 2");
  g_autofree char *ply1 = put_text("len.ply", t1);
  expect_mesh_error(ply1, "PLY list \"vertex_indices\" has a bad length nan");
  g_autofree char *t2 = g_strdup_printf(ply_head, "uchar", "3 0 -inf 2");
  g_auto(GStrv) parts = g_strsplit(t2, "int vertex_indices", 2);
  g_autofree char *t2f = g_strjoinv("float vertex_indices", parts);
  g_autofree char *ply2 = put_text("idx.ply", t2f);
  expect_mesh_error(ply2, "a PLY face refers to vertex -inf");
  static const char gii[] =
      "<GIFTI Version=\"1.0\" NumberOfDataArrays=\"2\">"
      "<DataArray Intent=\"NIFTI_INTENT_POINTSET\" DataType=\"NIFTI_TYPE_FLOAT32\" "
      "ArrayIndexingOrder=\"RowMajorOrder\" Dimensionality=\"2\" Dim0=\"3\" Dim1=\"3\" "
      "Encoding=\"ASCII\" Endian=\"LittleEndian\"><Data>0 0 0 1 0 0 0 1 0</Data></DataArray>"
      "<DataArray Intent=\"NIFTI_INTENT_TRIANGLE\" DataType=\"NIFTI_TYPE_FLOAT32\" "
      "ArrayIndexingOrder=\"RowMajorOrder\" Dimensionality=\"2\" Dim0=\"1\" Dim1=\"3\" "
      "Encoding=\"ASCII\" Endian=\"LittleEndian\"><Data>0 nan 2</Data></DataArray></GIFTI>";
  g_autofree char *g = put_text("nan.gii", gii);
  g_autofree char *probe_path = put_text("probe.gii", gifti_text);
  g_autoptr(GError) probe = NULL;
  g_autoptr(NwSurface) probe_mesh = nw_mesh_read(probe_path, &probe);
  if (g_error_matches(probe, NW_ERROR, NW_ERROR_UNSUPPORTED)) /* built without giftiio */
    g_test_message("GIFTI NaN index not checked: built without giftiio");
  else
    expect_mesh_error(g, "a triangle refers to vertex nan");
}

/* GIFTI input that crashes giftiio or that it takes for a mesh (points 1 and 2). */
static void test_gifti_guard(void)
{
  g_autofree char *data = put_text("data.gii", "<Data/>");
  expect_mesh_error(data, "not a valid GIFTI file: <Data> may not stand at the top (the root "
                          "must be <GIFTI>)");
  g_autofree char *md = put_text("md.gii", "<GIFTI Version=\"1.0\" NumberOfDataArrays=\"0\">"
                                           "<MetaData><MD><Value>x</Value></MD></MetaData></GIFTI>");
  expect_mesh_error(md, "not a valid GIFTI file: <MD> lacks one of its parts");
  /* elements outside their parent: each of these made giftiio 1.0.9 dereference NULL */
  g_autofree char *md2 = put_text("md2.gii", "<GIFTI Version=\"1.0\" NumberOfDataArrays=\"0\">"
                                             "<MD><Name>a</Name></MD></GIFTI>");
  expect_mesh_error(md2, "not a valid GIFTI file: <MD> may not stand inside <GIFTI>");
  g_autofree char *cs = put_text("cs.gii", "<GIFTI Version=\"1.0\" NumberOfDataArrays=\"0\">"
                                           "<CoordinateSystemTransformMatrix/></GIFTI>");
  expect_mesh_error(cs, "not a valid GIFTI file: <CoordinateSystemTransformMatrix> may not "
                        "stand inside <GIFTI>");
  /* anything after a CDATA section in its element, even a newline: giftiio 1.0.9 appended it
   * to a buffer it had dropped (SEGV; found by fuzz_mesh_gifti on the H100, 2026-11-23) */
  static const char cdata[] = "<GIFTI Version=\"1.0\" NumberOfDataArrays=\"0\"><MetaData><MD>"
                              "<Name><![CDATA[a]]>%s</Name><Value>x</Value></MD></MetaData></GIFTI>";
  static const char *const tails[] = {"\n", "z", "<![CDATA[b]]>"};
  for (guint i = 0; i < G_N_ELEMENTS(tails); i++) {
    g_autofree char *t = g_strdup_printf(cdata, tails[i]);
    g_autofree char *name = g_strdup_printf("cdata%u.gii", i);
    g_autofree char *path = put_text(name, t);
    expect_mesh_error(path, "not a valid GIFTI file: text follows the CDATA section in <Name>, "
                            "which giftiio cannot read");
  }
  /* a CDATA section with nothing after it passes the guard and giftiio reads it (this
   * document has no vertices, which is what is said then) */
  g_autofree char *plain = g_strdup_printf(cdata, "");
  g_autofree char *plain_path = put_text("cdata-ok.gii", plain);
  expect_mesh_error(plain_path, "no NIFTI_INTENT_POINTSET data array");
  /* external data: outside the GIFTI's folder, and too short */
  static const char ext[] =
      "<GIFTI Version=\"1.0\" NumberOfDataArrays=\"1\">"
      "<DataArray Intent=\"NIFTI_INTENT_POINTSET\" DataType=\"NIFTI_TYPE_FLOAT32\" "
      "ArrayIndexingOrder=\"RowMajorOrder\" Dimensionality=\"2\" Dim0=\"%d\" Dim1=\"3\" "
      "Encoding=\"ExternalFileBinary\" Endian=\"LittleEndian\" ExternalFileName=\"%s\" "
      "ExternalFileOffset=\"0\"><Data></Data></DataArray></GIFTI>";
  g_autofree char *t1 = g_strdup_printf(ext, 1, "/etc/passwd");
  g_autofree char *outside = put_text("outside.gii", t1);
  expect_mesh_error(outside, "not a valid GIFTI file: DataArray 0: external data file "
                             "/etc/passwd is outside the GIFTI file's folder");
  g_autofree char *bin = put_text("short.bin", "0123456789ab"); /* 12 bytes: one vertex */
  g_autofree char *t2 = g_strdup_printf(ext, 4, bin);
  g_autofree char *shortg = put_text("short.gii", t2);
  g_autofree char *reason = g_strdup_printf(
      "not a valid GIFTI file: DataArray 0: external data file %s is short: 12 values of 4 "
      "bytes from offset 0 need 48 bytes, it has 12",
      bin);
  expect_mesh_error(shortg, reason);
}

/* A FIFO is refused, not waited on (point 6). */
static void test_fifo(void)
{
  g_autofree char *path = nw_test_path("pipe.vtk");
  g_assert_cmpint(mkfifo(path, 0600), ==, 0);
  expect_mesh_error(path, "cannot open: not a regular file (a FIFO, socket or device)");
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/io_mesh/round_trip/ply", test_round_trip_ply);
  g_test_add_func("/io_mesh/round_trip/obj", test_round_trip_obj);
  g_test_add_func("/io_mesh/round_trip/vtk", test_round_trip_vtk);
  g_test_add_func("/io_mesh/round_trip/gifti", test_round_trip_gifti);
  g_test_add_func("/io_mesh/freesurfer", test_freesurfer);
  g_test_add_func("/io_mesh/freesurfer_errors", test_freesurfer_errors);
  g_test_add_func("/io_mesh/freesurfer_curv", test_freesurfer_curv);
  g_test_add_func("/io_mesh/vtk_ascii", test_vtk_ascii);
  g_test_add_func("/io_mesh/vtk_binary", test_vtk_binary);
  g_test_add_func("/io_mesh/vtk_51", test_vtk_51);
  g_test_add_func("/io_mesh/vtk_errors", test_vtk_errors);
  g_test_add_func("/io_mesh/ply_ascii", test_ply_ascii);
  g_test_add_func("/io_mesh/ply_binary", test_ply_binary);
  g_test_add_func("/io_mesh/ply_errors", test_ply_errors);
  g_test_add_func("/io_mesh/obj", test_obj);
  g_test_add_func("/io_mesh/gifti_hand_made", test_gifti_hand_made);
  g_test_add_func("/io_mesh/errors", test_errors);
  g_test_add_func("/io_mesh/nan-indices", test_nan_indices);
  g_test_add_func("/io_mesh/gifti-guard", test_gifti_guard);
  g_test_add_func("/io_mesh/fifo", test_fifo);
  g_test_add_func("/io_mesh/nibabel/freesurfer", test_nibabel_freesurfer);
  g_test_add_func("/io_mesh/nibabel/gifti", test_nibabel_gifti);
  return g_test_run();
}
