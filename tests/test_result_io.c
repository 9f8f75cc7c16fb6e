/* test_result_io.c — core/result_io.h: a method result written as PREFIX_NAME.nii.gz, the
 * required names first (or those names only: nw_result_write_names), fields as displacement
 * fields, labels as int32; a missing required name fails before anything is written; nothing
 * is named before the commit, and a run whose last file cannot be written leaves no file at
 * all. CPU only. */
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io_nifti.h"
#include "nw_error.h"
#include "result_io.h"
#include "testutil.h"

/* 4x3x2 voxels of 2 mm; value(i) = i * scale (+ c for component c of fields). */
static NwVolume *ramp(int nc, float scale)
{
  NwVolume *v = nw_volume_new(4, 3, 2, nc, NULL);
  nw_volume_set_spacing(v, 2, 2, 2);
  for (size_t i = 0; i < nw_volume_n_floats(v); i++)
    v->data[i] = (float)(i / nc) * scale + (float)(i % nc);
  return v;
}

static NwMethodResult *result(gboolean with_field)
{
  NwMethodResult *r = nw_method_result_new();
  nw_method_result_add(r, "labels", ramp(1, 1.0f));
  nw_method_result_add(r, "warped", ramp(1, 0.5f));
  if (with_field)
    nw_method_result_add(r, "forward", ramp(3, 0.25f));
  return r;
}

static void test_write(void)
{
  g_autoptr(NwMethodResult) r = result(TRUE);
  g_autofree char *prefix = nw_test_path("res");
  static const char *const required[] = {"warped", "forward", NULL};
  g_autoptr(GError) error = NULL;
  g_autoptr(NwOutputs) out = nw_outputs_new(FALSE);
  g_assert_true(nw_result_write(out, r, "demons", prefix, required, NW_FIELD_RAS, &error));
  g_assert_no_error(error);
  g_autofree char *first = g_strdup_printf("%s_warped.nii.gz", prefix);
  g_assert_false(g_file_test(first, G_FILE_TEST_EXISTS)); /* not before the commit */
  g_assert_true(nw_outputs_commit(out, &error));
  const char *const *written = nw_outputs_paths(out);
  /* required first, in their order, then the rest in the result's order */
  g_assert_cmpuint(g_strv_length((char **)written), ==, 3);
  static const char *const order[] = {"warped", "forward", "labels"};
  for (guint i = 0; i < 3; i++) {
    g_autofree char *want = g_strdup_printf("%s_%s.nii.gz", prefix, order[i]);
    g_assert_cmpstr(written[i], ==, want);
  }
  g_autoptr(NwVolume) w = nw_nifti_read(written[0], &error);
  g_assert_no_error(error);
  g_assert_cmpfloat(nw_test_max_abs_diff(w, nw_method_result_get(r, "warped")), <, 1e-6);
  g_autoptr(NwVolume) u = nw_nifti_read_field(written[1], &error);
  g_assert_no_error(error);
  g_assert_cmpint(u->nc, ==, 3);
  g_assert_cmpfloat(nw_test_max_abs_diff(u, nw_method_result_get(r, "forward")), <, 1e-5);
  NwNiftiInfo info;
  g_assert_true(nw_nifti_read_info(written[2], &info, &error));
  g_assert_cmpstr(info.datatype_name, ==, "int32");
}

/* nw_result_write_names: the names asked for, in their order, and no other volume. */
static void test_write_names(void)
{
  g_autoptr(NwMethodResult) r = result(TRUE);
  g_autofree char *prefix = nw_test_path("names");
  static const char *const names[] = {"forward", "labels", NULL};
  g_autoptr(GError) error = NULL;
  g_autoptr(NwOutputs) out = nw_outputs_new(FALSE);
  g_assert_true(nw_result_write_names(out, r, "demons", prefix, names, NW_FIELD_ITK, &error));
  g_assert_true(nw_outputs_commit(out, &error));
  g_assert_no_error(error);
  const char *const *written = nw_outputs_paths(out);
  g_assert_cmpuint(g_strv_length((char **)written), ==, 2);
  for (guint i = 0; i < 2; i++) {
    g_autofree char *want = g_strdup_printf("%s_%s.nii.gz", prefix, names[i]);
    g_assert_cmpstr(written[i], ==, want);
  }
  g_autofree char *warped = g_strdup_printf("%s_warped.nii.gz", prefix);
  g_assert_false(g_file_test(warped, G_FILE_TEST_EXISTS));
  static const char *const absent[] = {"inverse", NULL};
  g_autoptr(NwOutputs) out2 = nw_outputs_new(TRUE);
  g_assert_false(nw_result_write_names(out2, r, "demons", prefix, absent, NW_FIELD_ITK, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_INVALID);
  g_assert_cmpstr(error->message, ==, "demons: the job returned no 'inverse'");
}

static void test_missing(void)
{
  g_autoptr(NwMethodResult) r = result(FALSE);
  g_autofree char *prefix = nw_test_path("missing");
  static const char *const required[] = {"warped", "forward", NULL};
  g_autoptr(GError) error = NULL;
  g_autoptr(NwOutputs) out = nw_outputs_new(FALSE);
  g_assert_false(nw_result_write(out, r, "demons", prefix, required, NW_FIELD_ITK, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_INVALID);
  g_assert_cmpstr(error->message, ==, "demons: the job returned no 'forward'");
  g_autofree char *warped = g_strdup_printf("%s_warped.nii.gz", prefix);
  g_assert_false(g_file_test(warped, G_FILE_TEST_EXISTS)); /* nothing written */
}

static void test_bad_folder(void)
{
  g_autoptr(NwMethodResult) r = result(FALSE);
  g_autoptr(GError) error = NULL;
  g_autoptr(NwOutputs) out = nw_outputs_new(FALSE);
  g_assert_false(nw_result_write(out, r, "demons", "/nonexistent-nw/out", NULL, NW_FIELD_ITK,
                                 &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_IO);
  g_assert_cmpstr(error->message, ==,
                  "/nonexistent-nw/out_labels.nii.gz: cannot write: folder /nonexistent-nw does "
                  "not exist");
}

/* The last output cannot be written (a folder has its name): the run fails and leaves
 * nothing, not even the files written before (issue 9, point 4). */
static void test_all_or_nothing(void)
{
  g_autoptr(NwMethodResult) r = result(TRUE);
  g_autofree char *dir = nw_test_path("aon");
  g_assert_cmpint(g_mkdir(dir, 0755), ==, 0);
  g_autofree char *prefix = g_build_filename(dir, "run", NULL);
  g_autofree char *blocker = g_strdup_printf("%s_labels.nii.gz", prefix);
  g_assert_cmpint(g_mkdir(blocker, 0755), ==, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(NwOutputs) out = nw_outputs_new(TRUE);
  static const char *const required[] = {"warped", "forward", NULL};
  g_assert_false(nw_result_write(out, r, "demons", prefix, required, NW_FIELD_ITK, &error));
  g_autofree char *want = g_strdup_printf("%s: cannot write: is a folder", blocker);
  g_assert_cmpstr(error->message, ==, want);
  g_clear_pointer(&out, nw_outputs_free);
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  const char *name;
  while ((name = g_dir_read_name(d)) != NULL)
    if (strcmp(name, "run_labels.nii.gz") != 0)
      g_error("%s left behind", name);
}

/* A writer that dies in the middle of its file, after a first file of the set was written. */
static gboolean write_and_die(const char *tmp_path, gpointer data, GError **error)
{
  FILE *f = g_fopen(tmp_path, "wb");
  fputs("half a file", f);
  fflush(f);
  raise(GPOINTER_TO_INT(data));
  return TRUE;
}

/* SIGKILL and SIGTERM while results are being written leave nothing: the temporaries have
 * no names (issue 9, point 4). */
static void test_killed_while_writing(void)
{
  const int sigs[2] = {SIGKILL, SIGTERM};
  for (int k = 0; k < 2; k++) {
    g_autofree char *dir = g_strdup_printf("%s/killed%d", nw_test_tmpdir(), k);
    g_assert_cmpint(g_mkdir(dir, 0755), ==, 0);
    g_autofree char *a = g_build_filename(dir, "run_warped.nii.gz", NULL);
    g_autofree char *b = g_build_filename(dir, "run_summary.json", NULL);
    pid_t child = fork();
    if (child == 0) {
      g_autoptr(NwOutputs) out = nw_outputs_new(FALSE);
      g_autoptr(NwVolume) v = ramp(1, 1.0f);
      if (!nw_nifti_write_to(out, a, v, NW_DT_FLOAT32, FALSE, NULL))
        _exit(3);
      nw_outputs_write(out, b, write_and_die, GINT_TO_POINTER(sigs[k]), NULL);
      _exit(4); /* not reached */
    }
    int status = 0;
    g_assert_cmpint(waitpid(child, &status, 0), ==, child);
    g_assert_true(WIFSIGNALED(status));
    g_assert_cmpint(WTERMSIG(status), ==, sigs[k]);
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    const char *name = g_dir_read_name(d);
    if (name != NULL)
      g_error("%s left behind after signal %d", name, sigs[k]);
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/result-io/write", test_write);
  g_test_add_func("/result-io/write-names", test_write_names);
  g_test_add_func("/result-io/missing", test_missing);
  g_test_add_func("/result-io/bad-folder", test_bad_folder);
  g_test_add_func("/result-io/all-or-nothing", test_all_or_nothing);
  g_test_add_func("/result-io/killed-while-writing", test_killed_while_writing);
  return g_test_run();
}
