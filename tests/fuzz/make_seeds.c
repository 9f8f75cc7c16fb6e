/* make_seeds.c — writes the seed corpus of every fuzz harness (tests/fuzz) into
 * CORPUS/<harness>/, and an empty CORPUS-new/<harness>/ for what a short run finds. Small
 * valid files made by the project's own writers (NIfTI, fields, GIFTI, VTK, PLY, OBJ, PNG),
 * by libtiff (TIFF) or by hand (FreeSurfer, PNM, key files): the fuzzer mutates from there.
 * Usage: make_seeds CORPUS. Main thread. */
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <tiffio.h>

#include "io_image.h"
#include "io_mesh.h"
#include "io_nifti.h"

static const char *root;

static char *seed_path(const char *harness, const char *name)
{
  g_autofree char *dir = g_build_filename(root, harness, NULL);
  g_autofree char *fresh = g_strdup_printf("%s-new/%s", root, harness);
  g_mkdir_with_parents(dir, 0755);
  g_mkdir_with_parents(fresh, 0755);
  return g_build_filename(dir, name, NULL);
}

static void put(const char *harness, const char *name, const void *data, gsize len)
{
  g_autofree char *p = seed_path(harness, name);
  if (!g_file_set_contents(p, data, (gssize)len, NULL))
    g_error("cannot write %s", p);
}

static NwVolume *small_volume(int nc)
{
  NwVolume *v = nw_volume_new(4, 3, 2, nc, NULL);
  for (size_t i = 0; i < nw_volume_n_floats(v); i++)
    v->data[i] = (float)(i % 7) * 1.5f - 2.0f;
  nw_volume_set_spacing(v, 2.0, 1.5, 3.0);
  return v;
}

/* A NIfTI file written by nw_nifti_write, as bytes. */
static GBytes *nifti_bytes(NwDatatype type, gboolean nifti2, int nc)
{
  g_autofree char *tmp = g_build_filename(root, "tmp.nii", NULL);
  g_autoptr(NwVolume) v = small_volume(nc);
  if (!nw_nifti_write(tmp, v, type, nifti2, NULL))
    g_error("cannot write %s", tmp);
  char *data;
  gsize len;
  g_file_get_contents(tmp, &data, &len, NULL);
  g_unlink(tmp);
  return g_bytes_new_take(data, len);
}

static void nifti_seeds(void)
{
  const struct {
    NwDatatype t;
    gboolean v2;
    int nc;
    const char *name;
  } kinds[] = {{NW_DT_INT16, FALSE, 1, "int16.nii"},     {NW_DT_FLOAT32, TRUE, 1, "f32-v2.nii"},
               {NW_DT_UINT8, FALSE, 2, "u8-4d.nii"},     {NW_DT_FLOAT64, FALSE, 1, "f64.nii"}};
  for (gsize i = 0; i < G_N_ELEMENTS(kinds); i++) {
    g_autoptr(GBytes) b = nifti_bytes(kinds[i].t, kinds[i].v2, kinds[i].nc);
    gsize len;
    const guint8 *d = g_bytes_get_data(b, &len);
    put("fuzz_nifti", kinds[i].name, d, len);
    /* the gz harness gzips what follows its first byte (0: a whole stream) */
    g_autofree guint8 *gz = g_malloc(len + 1);
    gz[0] = 0;
    memcpy(gz + 1, d, len);
    put("fuzz_nifti_gz", kinds[i].name, gz, len + 1);
  }
  g_autoptr(NwVolume) u = small_volume(3);
  const NwFieldConvention conv[2] = {NW_FIELD_ITK, NW_FIELD_RAS};
  for (int c = 0; c < 2; c++) {
    g_autofree char *p = seed_path("fuzz_field", c == 0 ? "itk.nii" : "ras.nii");
    if (!nw_nifti_write_field(p, u, conv[c], NULL))
      g_error("cannot write %s", p);
  }
}

/* A tetrahedron with a value per vertex. */
static NwSurface *tetra(void)
{
  static const float v[12] = {0, 0, 0, 1.5f, 0, 0, 0, 2, 0, 0, 0, 2.5f};
  static const guint32 t[12] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
  NwSurface *s = nw_surface_new(4, 4, NULL);
  memcpy(s->vertices, v, sizeof v);
  memcpy(s->triangles, t, sizeof t);
  s->scalars = g_new(float, 4);
  for (int i = 0; i < 4; i++)
    s->scalars[i] = 0.25f * (float)i;
  return s;
}

static void be32(GByteArray *b, guint32 u)
{
  guint8 x[4] = {u >> 24, u >> 16 & 0xff, u >> 8 & 0xff, u & 0xff};
  g_byte_array_append(b, x, 4);
}

static void freesurfer_seeds(const NwSurface *s)
{
  g_autoptr(GByteArray) b = g_byte_array_new();
  g_byte_array_append(b, (const guint8 *)"\xff\xff\xfe" "created by seeds\n\n", 21);
  be32(b, 4), be32(b, 4);
  for (int i = 0; i < 12; i++) {
    guint32 u;
    memcpy(&u, &s->vertices[i], 4);
    be32(b, u);
  }
  for (int i = 0; i < 12; i++)
    be32(b, s->triangles[i]);
  put("fuzz_mesh_freesurfer", "lh.pial", b->data, b->len);
  be32(b, 20); /* the volume-geometry footer */
  const char *footer = "valid = 1  # volume info valid\ncras = 1.5 -2 3\n";
  g_byte_array_append(b, (const guint8 *)footer, (guint)strlen(footer));
  put("fuzz_mesh_freesurfer", "lh.pial-cras", b->data, b->len);
  g_autoptr(GByteArray) c = g_byte_array_new();
  g_byte_array_append(c, (const guint8 *)"\xff\xff\xff", 3);
  be32(c, 4), be32(c, 4), be32(c, 1);
  for (int i = 0; i < 4; i++)
    be32(c, 0x3f800000u + (guint32)i);
  put("fuzz_mesh_freesurfer", "lh.curv", c->data, c->len);
}

static void mesh_seeds(void)
{
  g_autoptr(NwSurface) s = tetra();
  const struct {
    const char *harness, *name;
  } w[] = {{"fuzz_mesh_gifti", "x.gii"},
           {"fuzz_mesh_vtk", "x.vtk"},
           {"fuzz_mesh_ply", "x.ply"},
           {"fuzz_mesh_obj", "x.obj"}};
  for (gsize i = 0; i < G_N_ELEMENTS(w); i++) {
    g_autofree char *p = seed_path(w[i].harness, w[i].name);
    if (!nw_mesh_write(p, s, NW_MESH_AUTO, NULL))
      g_error("cannot write %s", p);
  }
  static const char vtk_ascii[] = "# vtk DataFile Version 3.0\nt\nASCII\nDATASET POLYDATA\n"
                                  "POINTS 4 float\n0 0 0 1 0 0 0 1 0 0 0 1\n"
                                  "POLYGONS 2 9\n4 0 1 2 3\n3 0 1 3\n"
                                  "POINT_DATA 4\nSCALARS s float 1\nLOOKUP_TABLE default\n"
                                  "0 1 2 3\n";
  put("fuzz_mesh_vtk", "ascii.vtk", vtk_ascii, sizeof vtk_ascii - 1);
  static const char vtk51[] = "# vtk DataFile Version 5.1\nt\nASCII\nDATASET POLYDATA\n"
                              "POINTS 4 float\n0 0 0 1 0 0 0 1 0 0 0 1\nTRIANGLE_STRIPS 2 4\n"
                              "OFFSETS vtktypeint64\n0 4\nCONNECTIVITY vtktypeint64\n0 1 2 3\n";
  put("fuzz_mesh_vtk", "v51.vtk", vtk51, sizeof vtk51 - 1);
  static const char ply_ascii[] = "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\n"
                                  "property float y\nproperty float z\nproperty float q\n"
                                  "element face 2\nproperty list uchar int vertex_indices\n"
                                  "end_header\n0 0 0 1\n1 0 0 2\n0 1 0 3\n0 0 1 4\n"
                                  "3 0 1 2\n4 0 1 2 3\n";
  put("fuzz_mesh_ply", "ascii.ply", ply_ascii, sizeof ply_ascii - 1);
  static const char obj[] = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nvt 0 0\nvn 0 0 1\n"
                            "f 1/1/1 2/1/1 3/1/1\nf -4 -3 -1\n";
  put("fuzz_mesh_obj", "vtn.obj", obj, sizeof obj - 1);
  static const char gii_ascii[] =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<GIFTI Version=\"1.0\" NumberOfDataArrays=\"2\">"
      "<DataArray Intent=\"NIFTI_INTENT_POINTSET\" DataType=\"NIFTI_TYPE_FLOAT32\" "
      "ArrayIndexingOrder=\"RowMajorOrder\" Dimensionality=\"2\" Dim0=\"4\" Dim1=\"3\" "
      "Encoding=\"ASCII\" Endian=\"LittleEndian\" ExternalFileName=\"\" ExternalFileOffset=\"\">"
      "<Data>0 0 0 1 0 0 0 1 0 0 0 1</Data></DataArray>"
      "<DataArray Intent=\"NIFTI_INTENT_TRIANGLE\" DataType=\"NIFTI_TYPE_INT32\" "
      "ArrayIndexingOrder=\"RowMajorOrder\" Dimensionality=\"2\" Dim0=\"2\" Dim1=\"3\" "
      "Encoding=\"ASCII\" Endian=\"LittleEndian\" ExternalFileName=\"\" ExternalFileOffset=\"\">"
      "<Data>0 1 2 0 1 3</Data></DataArray></GIFTI>\n";
  put("fuzz_mesh_gifti", "ascii.gii", gii_ascii, sizeof gii_ascii - 1);
  freesurfer_seeds(s);
}

static void tiff_seed(const char *name, int bits, gboolean tiled)
{
  g_autofree char *p = seed_path("fuzz_image_tiff", name);
  TIFF *t = TIFFOpen(p, "w");
  TIFFSetField(t, TIFFTAG_IMAGEWIDTH, (uint32_t)5);
  TIFFSetField(t, TIFFTAG_IMAGELENGTH, (uint32_t)4);
  TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, (uint16_t)bits);
  TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)1);
  TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
  TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  guint8 buf[16 * 16 * 2] = {0};
  for (gsize i = 0; i < sizeof buf; i++)
    buf[i] = (guint8)(i * 37);
  if (tiled) {
    TIFFSetField(t, TIFFTAG_TILEWIDTH, (uint32_t)16);
    TIFFSetField(t, TIFFTAG_TILELENGTH, (uint32_t)16);
    TIFFWriteTile(t, buf, 0, 0, 0, 0);
  } else {
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, (uint32_t)2);
    TIFFSetField(t, TIFFTAG_COMPRESSION, bits == 8 ? COMPRESSION_LZW : COMPRESSION_NONE);
    for (int y = 0; y < 4; y++)
      TIFFWriteScanline(t, buf + y * 10, (uint32_t)y, 0);
  }
  TIFFClose(t);
}

static void image_seeds(void)
{
  g_autoptr(NwVolume) v = small_volume(1);
  g_autofree char *png = seed_path("fuzz_image_png", "x.png");
  if (!nw_image_write_png(png, v, 0, -2.0f, 8.0f, NULL))
    g_error("cannot write %s", png);
  static const char p5[] = "P5\n# c\n3 2\n255\n\x01\x02\x03\x04\x05\x06";
  put("fuzz_image_pnm", "p5.pgm", p5, sizeof p5 - 1);
  static const char p2[] = "P2\n3 2\n65535\n1 2 3\n4 5 60000\n";
  put("fuzz_image_pnm", "p2.pgm", p2, sizeof p2 - 1);
  static const char p6[] = "P6 2 1 255 \x01\x02\x03\x04\x05\x06";
  put("fuzz_image_pnm", "p6.ppm", p6, sizeof p6 - 1);
  tiff_seed("u8-lzw.tif", 8, FALSE);
  tiff_seed("u16.tif", 16, FALSE);
  tiff_seed("tiled.tif", 16, TRUE);
}

static void keyfile_seeds(void)
{
  static const char demons[] = "[demons]\nsimilarity=lcc\nlcc-sigma=1.5\nsigma-diff=1.75\n"
                               "iterations=300\ntolerance=1e-6\nlevels=3\n";
  static const char smooth[] = "# comment\n[smooth]\nsigma=2\niterations=3\n";
  put("fuzz_params", "demons.ini", demons, sizeof demons - 1);
  put("fuzz_params", "smooth.ini", smooth, sizeof smooth - 1);
  static const char session[] =
      "[session]\nversion=1\nmethod=demons\ndevice=cpu\nfixed=/data/f.nii.gz\n"
      "moving=/data/m.nii.gz\ndemo=false\nsecond-job=true\ndevice-2=auto\n"
      "[demons]\nsigma-fluid=1\niterations=20\n[demons@2]\nsimilarity=ssd\n";
  put("fuzz_session", "session.ini", session, sizeof session - 1);
}

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: make_seeds CORPUS\n");
    return 2;
  }
  root = argv[1];
  g_mkdir_with_parents(root, 0755);
  nifti_seeds();
  mesh_seeds();
  image_seeds();
  keyfile_seeds();
  printf("make_seeds: corpus written to %s\n", root);
  return 0;
}
