/* test_io_bad_input.c — every kind of bad NIfTI input gives a GError naming the file and the
 * reason (never a crash, a hang or a huge allocation), and failed writes leave nothing
 * behind. The bad files are made here from good ones. Main thread, CPU. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "io_nifti.h"
#include "nw_error.h"
#include "testutil.h"

/* A good 6x5x4 int16 NIfTI-1 (or -2) file; returns its path. */
static char *good_file(const char *name, gboolean nifti2)
{
  char *path = nw_test_path(name);
  g_autoptr(NwVolume) v = nw_test_volume(6, 5, 4, 1, 7);
  g_assert_true(nw_nifti_write(path, v, NW_DT_INT16, nifti2, NULL));
  return path;
}

static GByteArray *slurp(const char *path)
{
  gchar *buf;
  gsize len;
  g_assert_true(g_file_get_contents(path, &buf, &len, NULL));
  return g_byte_array_new_take((guint8 *)buf, len);
}

static void spit(const char *path, const guint8 *data, gsize len)
{
  g_assert_true(g_file_set_contents(path, (const char *)data, (gssize)len, NULL));
}

static void spit_gz(const char *path, const guint8 *data, gsize len)
{
  gzFile f = gzopen(path, "wb");
  g_assert_nonnull(f);
  g_assert_cmpint(gzwrite(f, data, (unsigned)len), ==, (int)len);
  g_assert_cmpint(gzclose(f), ==, Z_OK);
}

/* Reading path fails with code and a message holding the file name and reason. */
static void expect_read_error(const char *path, int code, const char *reason)
{
  GError *err = NULL;
  NwVolume *v = nw_nifti_read(path, &err);
  g_assert_null(v);
  g_assert_error(err, NW_ERROR, code);
  if (strstr(err->message, path) == NULL || strstr(err->message, reason) == NULL)
    g_error("message \"%s\" lacks \"%s\" or \"%s\"", err->message, path, reason);
  g_clear_error(&err);
  /* The header-only reader refuses the same files, except for data problems. */
  NwNiftiInfo info;
  gboolean ok = nw_nifti_read_info(path, &info, &err);
  g_assert_true(ok == (err == NULL));
  g_clear_error(&err);
}

static void test_missing_and_folder(void)
{
  g_autofree char *missing = nw_test_path("nope.nii.gz");
  expect_read_error(missing, NW_ERROR_IO, "cannot open: No such file");
  expect_read_error(nw_test_tmpdir(), NW_ERROR_IO, "is a folder");
}

static void test_not_nifti(void)
{
  g_autofree char *txt = nw_test_path("notes.nii");
  g_autofree char *junk = g_strnfill(600, 'x');
  spit(txt, (const guint8 *)junk, 600);
  expect_read_error(txt, NW_ERROR_FORMAT, "not a NIfTI file");
  g_autofree char *path = good_file("badmagic.nii", FALSE);
  g_autoptr(GByteArray) b = slurp(path);
  memcpy(b->data + 344, "xyz", 4);
  spit(path, b->data, b->len);
  expect_read_error(path, NW_ERROR_FORMAT, "bad magic");
  g_autofree char *empty = nw_test_path("empty.nii");
  spit(empty, (const guint8 *)"", 0);
  expect_read_error(empty, NW_ERROR_FORMAT, "truncated header");
}

static void test_truncated_header(void)
{
  for (int ver = 1; ver <= 2; ver++) {
    g_autofree char *path = good_file(ver == 1 ? "th1.nii" : "th2.nii", ver == 2);
    g_autoptr(GByteArray) b = slurp(path);
    spit(path, b->data, 200);
    expect_read_error(path, NW_ERROR_FORMAT,
                      ver == 1 ? "truncated header: 200 of 348 bytes"
                               : "truncated header: 200 of 540 bytes");
    g_autofree char *gz = g_strconcat(path, ".gz", NULL);
    spit_gz(gz, b->data, 200);
    expect_read_error(gz, NW_ERROR_FORMAT, "truncated header");
  }
}

static void test_truncated_data(void)
{
  /* 6*5*4 int16 = 240 data bytes after a 352-byte header. */
  g_autofree char *path = good_file("td.nii", FALSE);
  g_autoptr(GByteArray) b = slurp(path);
  g_assert_cmpuint(b->len, ==, 352 + 240);
  spit(path, b->data, 352 + 100);
  expect_read_error(path, NW_ERROR_FORMAT, "truncated: 100 of 240 data bytes");
  /* Compressed: a complete gzip stream holding too little, and a cut gzip stream. */
  g_autofree char *gz = nw_test_path("td.nii.gz");
  spit_gz(gz, b->data, 352 + 100);
  expect_read_error(gz, NW_ERROR_FORMAT, "truncated: 100 of 240 data bytes");
  /* A small gzip file whose header promises 400 MB: refused by the counting pass. */
  g_autoptr(GByteArray) big = g_byte_array_sized_new(b->len);
  g_byte_array_append(big, b->data, 352 + 100);
  gint16 dims[4] = {3, 1000, 1000, 100};
  memcpy(big->data + 40, dims, sizeof dims);
  big->data[70] = 16, big->data[71] = 0, big->data[72] = 32, big->data[73] = 0; /* float32 */
  g_autofree char *big_gz = nw_test_path("big.nii.gz");
  spit_gz(big_gz, big->data, big->len);
  expect_read_error(big_gz, NW_ERROR_FORMAT, "truncated: 100 of 400000000 data bytes");
  g_autofree char *good_gz = nw_test_path("cut.nii.gz");
  g_autoptr(NwVolume) v = nw_test_volume(40, 30, 20, 1, 3);
  g_assert_true(nw_nifti_write(good_gz, v, NW_DT_FLOAT32, FALSE, NULL));
  g_autoptr(GByteArray) z = slurp(good_gz);
  spit(good_gz, z->data, z->len / 2);
  GError *err = NULL;
  g_assert_null(nw_nifti_read(good_gz, &err));
  g_assert_error(err, NW_ERROR, NW_ERROR_FORMAT);
  g_assert_nonnull(strstr(err->message, good_gz));
  g_assert_nonnull(strstr(err->message, "truncated") ? err->message
                                                     : strstr(err->message, "corrupt"));
  g_error_free(err);
}

static void put_i16(guint8 *p, gint16 v)
{
  memcpy(p, &v, 2);
}

static void test_absurd_dims(void)
{
  g_autofree char *path = good_file("dims.nii", FALSE);
  g_autoptr(GByteArray) good = slurp(path);
  /* NIfTI-1 dim[] are int16 at byte 40. */
  g_autoptr(GByteArray) b = g_byte_array_sized_new(good->len);
  g_byte_array_append(b, good->data, good->len);
  put_i16(b->data + 42, 32767), put_i16(b->data + 44, 32767), put_i16(b->data + 46, 32767);
  spit(path, b->data, b->len);
  expect_read_error(path, NW_ERROR_FORMAT, "absurd dimensions");
  memcpy(b->data, good->data, good->len);
  put_i16(b->data + 44, -5);
  spit(path, b->data, b->len);
  expect_read_error(path, NW_ERROR_FORMAT, "dim[2] = -5");
  memcpy(b->data, good->data, good->len);
  put_i16(b->data + 46, 0);
  spit(path, b->data, b->len);
  expect_read_error(path, NW_ERROR_FORMAT, "dim[3] = 0");
  memcpy(b->data, good->data, good->len);
  put_i16(b->data + 40, 9);
  spit(path, b->data, b->len);
  expect_read_error(path, NW_ERROR_FORMAT, "dim[0] = 9");
  /* NIfTI-2: int64 dims at byte 16; exactly 2^31 voxels. */
  g_autofree char *p2 = good_file("dims2.nii.gz", TRUE);
  g_autoptr(GByteArray) raw = g_byte_array_new();
  gzFile f = gzopen(p2, "rb");
  guint8 tmp[4096];
  int n;
  while ((n = gzread(f, tmp, sizeof tmp)) > 0)
    g_byte_array_append(raw, tmp, (guint)n);
  gzclose(f);
  gint64 d[4] = {3, G_GINT64_CONSTANT(1) << 31, 1, 1};
  memcpy(raw->data + 16, d, sizeof d);
  spit_gz(p2, raw->data, raw->len);
  expect_read_error(p2, NW_ERROR_FORMAT, "absurd dimensions: 2147483648 voxels");
}

static void put_f32(guint8 *p, float v)
{
  memcpy(p, &v, 4);
}

/* Reading fails with exactly "PATH: reason". */
static void expect_exact(const char *path, const char *reason)
{
  GError *err = NULL;
  g_assert_null(nw_nifti_read(path, &err));
  g_autofree char *want = g_strdup_printf("%s: %s", path, reason);
  g_assert_nonnull(err);
  g_assert_cmpstr(err->message, ==, want);
  g_error_free(err);
}

/* A transform that is not one (issue 9, point 3): NaN in the sform, zero, negative or NaN
 * pixdims with no transform, a singular qform. */
static void test_bad_transform(void)
{
  g_autofree char *path = good_file("xf.nii", FALSE);
  g_autoptr(GByteArray) good = slurp(path);
  g_autoptr(GByteArray) b = g_byte_array_sized_new(good->len);
  g_byte_array_append(b, good->data, good->len);
  put_f32(b->data + 280, NAN); /* srow_x[0]; sform_code is 1 */
  spit(path, b->data, b->len);
  expect_exact(path, "the sform holds a non-finite value (nan at row 0, column 0)");
  const float bad_sizes[3] = {0.0f, -2.0f, NAN};
  const char *const msgs[3] = {"pixdim[1] = 0 is not a voxel size, and there is no sform or qform",
                               "pixdim[1] = -2 is not a voxel size, and there is no sform or qform",
                               "pixdim[1] = nan is not a voxel size, and there is no sform or qform"};
  for (int i = 0; i < 3; i++) {
    memcpy(b->data, good->data, good->len);
    put_i16(b->data + 252, 0), put_i16(b->data + 254, 0); /* qform_code, sform_code */
    put_f32(b->data + 80, bad_sizes[i]);
    spit(path, b->data, b->len);
    expect_exact(path, msgs[i]);
  }
  memcpy(b->data, good->data, good->len);
  put_i16(b->data + 254, 0); /* qform only, and the sform's third row zero has no say */
  put_f32(b->data + 80, 0.0f), put_f32(b->data + 84, 0.0f), put_f32(b->data + 88, 0.0f);
  spit(path, b->data, b->len);
  GError *err = NULL;
  g_autoptr(NwVolume) v = nw_nifti_read(path, &err); /* nifti_clib takes pixdim 0 as 1 here */
  g_assert_no_error(err);
}

/* vox_offset NaN, negative, past the end or inside the header (issue 9, point 3). */
static void test_bad_vox_offset(void)
{
  g_autofree char *path = good_file("vo.nii", FALSE);
  g_autoptr(GByteArray) good = slurp(path);
  const float offsets[4] = {1e12f, -352.0f, NAN, 100.0f};
  const char *const shown[4] = {"1e+12", "-352", "nan", "100"};
  for (int i = 0; i < 4; i++) {
    g_autoptr(GByteArray) b = g_byte_array_sized_new(good->len);
    g_byte_array_append(b, good->data, good->len);
    put_f32(b->data + 108, offsets[i]);
    spit(path, b->data, b->len);
    g_autofree char *reason = g_strdup_printf(
        "invalid vox_offset %s: the data must start at a whole byte after the 348-byte header "
        "and inside the file",
        shown[i]);
    expect_exact(path, reason);
  }
}

/* An unknown datatype is ours to report (nifti_clib would print a line of its own). */
static void test_unknown_datatype(void)
{
  g_autofree char *path = good_file("dt.nii", FALSE);
  g_autoptr(GByteArray) b = slurp(path);
  put_i16(b->data + 70, 9999);
  spit(path, b->data, b->len);
  expect_exact(path, "unknown datatype code 9999");
  put_i16(b->data + 70, 255); /* DT_ALL: nifti_clib's validity check takes it (fuzz_nifti) */
  spit(path, b->data, b->len);
  expect_exact(path, "unknown datatype code 255");
}

/* A .nii.gz whose last 8 bytes (the gzip trailer: CRC and length) are cut off (point 6). */
static void test_gz_trailer(void)
{
  g_autofree char *path = nw_test_path("trailer.nii.gz");
  g_autoptr(NwVolume) v = nw_test_volume(6, 5, 4, 1, 3);
  g_assert_true(nw_nifti_write(path, v, NW_DT_FLOAT32, FALSE, NULL));
  g_autoptr(GByteArray) z = slurp(path);
  spit(path, z->data, z->len - 8);
  expect_exact(path, "truncated: the gzip stream ends without its 8-byte trailer");
}

/* A FIFO as input is refused at once, never waited on (point 6). */
static void test_fifo(void)
{
  g_autofree char *path = nw_test_path("pipe.nii");
  g_assert_cmpint(mkfifo(path, 0600), ==, 0);
  expect_exact(path, "cannot open: not a regular file (a FIFO, socket or device)");
}

static void test_4d_and_datatype(void)
{
  g_autofree char *path = nw_test_path("four.nii.gz");
  g_autoptr(NwVolume) v = nw_test_volume(3, 4, 5, 4, 11);
  g_assert_true(nw_nifti_write(path, v, NW_DT_FLOAT32, FALSE, NULL));
  expect_read_error(path, NW_ERROR_FORMAT, "is 4D with 4 volumes");
  g_autoptr(NwVolume) m = nw_nifti_read_multi(path, NULL);
  g_assert_nonnull(m);
  g_assert_cmpint(m->nc, ==, 4);
  g_assert_cmpfloat(nw_test_max_abs_diff(v, m), ==, 0.0);
  /* complex64 (code 32, 64 bits): datatype at byte 70, bitpix at 72. */
  g_autofree char *cx = good_file("complex.nii", FALSE);
  g_autoptr(GByteArray) b = slurp(cx);
  put_i16(b->data + 70, 32), put_i16(b->data + 72, 64);
  spit(cx, b->data, b->len);
  expect_read_error(cx, NW_ERROR_FORMAT, "unsupported datatype COMPLEX64 (code 32)");
}

/* No file at path and no hidden temporary sibling in its folder. */
static void assert_nothing_left(const char *dir, const char *path)
{
  g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
  GDir *d = g_dir_open(dir, 0, NULL);
  g_assert_nonnull(d);
  const char *name;
  while ((name = g_dir_read_name(d)) != NULL)
    if (name[0] == '.' || g_str_has_suffix(name, ".tmp"))
      g_error("temporary file %s left in %s", name, dir);
  g_dir_close(d);
}

static void test_failed_writes(void)
{
  g_autoptr(NwVolume) v = nw_test_volume(4, 3, 2, 1, 5);
  GError *err = NULL;
  g_autofree char *nodir = nw_test_path("no/such/folder/out.nii");
  g_assert_false(nw_nifti_write(nodir, v, NW_DT_FLOAT32, FALSE, &err));
  g_assert_error(err, NW_ERROR, NW_ERROR_IO);
  g_assert_nonnull(strstr(err->message, nodir));
  g_assert_nonnull(strstr(err->message, "does not exist"));
  g_clear_error(&err);
  /* Fails inside the writer: 40000 voxels along x do not fit NIfTI-1's int16 dims. */
  g_autofree char *dir = nw_test_path("w");
  g_assert_cmpint(g_mkdir(dir, 0755), ==, 0);
  g_autofree char *big = g_build_filename(dir, "wide.nii.gz", NULL);
  g_autoptr(NwVolume) wide = nw_volume_new(40000, 1, 1, 1, NULL);
  g_assert_false(nw_nifti_write(big, wide, NW_DT_UINT8, FALSE, &err));
  g_assert_error(err, NW_ERROR, NW_ERROR_INVALID);
  g_assert_nonnull(strstr(err->message, big));
  g_assert_nonnull(strstr(err->message, "NIfTI-1 header"));
  g_clear_error(&err);
  assert_nothing_left(dir, big);
  /* ... while NIfTI-2 holds it. */
  g_assert_true(nw_nifti_write(big, wide, NW_DT_UINT8, TRUE, NULL));
  g_assert_cmpint(g_unlink(big), ==, 0);
  g_autofree char *fld = g_build_filename(dir, "f.nii", NULL);
  g_assert_false(nw_nifti_write_field(fld, v, NW_FIELD_ITK, &err));
  g_assert_error(err, NW_ERROR, NW_ERROR_INVALID);
  g_assert_nonnull(strstr(err->message, "3 components"));
  g_clear_error(&err);
  assert_nothing_left(dir, fld);
  if (geteuid() != 0) { /* root writes anywhere */
    g_autofree char *ro = nw_test_path("ro");
    g_assert_cmpint(g_mkdir(ro, 0555), ==, 0);
    g_autofree char *out = g_build_filename(ro, "out.nii", NULL);
    g_assert_false(nw_nifti_write(out, v, NW_DT_FLOAT32, FALSE, &err));
    g_assert_error(err, NW_ERROR, NW_ERROR_IO);
    g_assert_nonnull(strstr(err->message, "cannot write in folder"));
    g_clear_error(&err);
    assert_nothing_left(ro, out);
    g_chmod(ro, 0755);
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/io_bad_input/missing_and_folder", test_missing_and_folder);
  g_test_add_func("/io_bad_input/not_nifti", test_not_nifti);
  g_test_add_func("/io_bad_input/truncated_header", test_truncated_header);
  g_test_add_func("/io_bad_input/truncated_data", test_truncated_data);
  g_test_add_func("/io_bad_input/absurd_dims", test_absurd_dims);
  g_test_add_func("/io_bad_input/4d_and_datatype", test_4d_and_datatype);
  g_test_add_func("/io_bad_input/failed_writes", test_failed_writes);
  g_test_add_func("/io_bad_input/bad_transform", test_bad_transform);
  g_test_add_func("/io_bad_input/bad_vox_offset", test_bad_vox_offset);
  g_test_add_func("/io_bad_input/unknown_datatype", test_unknown_datatype);
  g_test_add_func("/io_bad_input/gz_trailer", test_gz_trailer);
  g_test_add_func("/io_bad_input/fifo", test_fifo);
  return g_test_run();
}
