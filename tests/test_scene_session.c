/* test_scene_session.c — session files and parameter presets (scene/nw_session.h): round
 * trip, the exact error messages of hand-edited files, presets by group. GLib only: no
 * display, no GPU. */
#include <string.h>

#include "method_table.h"
#include "nw_error.h"
#include "nw_session.h"
#include "testutil.h"

static NwParams *demons_defaults(void)
{
  g_autoptr(GError) error = NULL;
  const NwMethodOps *ops = nw_method_lookup("demons", NW_DEVICE_CPU, &error);
  g_assert_no_error(error);
  return nw_params_new(ops->params, ops->n_params);
}

static void write_text(const char *path, const char *text)
{
  g_autoptr(GError) error = NULL;
  g_assert_true(g_file_set_contents(path, text, -1, &error));
  g_assert_no_error(error);
}

/* s saved to path, then read back into r. */
static void save_and_load(const NwSession *s, const char *path, NwSession *r)
{
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_session_save(s, path, &error));
  g_assert_no_error(error);
  g_assert_true(nw_session_load(r, path, &error));
  g_assert_no_error(error);
}

static void test_session_round_trip(void)
{
  NwSession s = {0};
  s.method = g_strdup("demons");
  s.device = NW_DEVICE_CUDA;
  s.fixed_path = g_strdup("/data/fixed.nii.gz");
  s.moving_path = g_strdup("/data/moving dir/moving.nii.gz");
  s.params = demons_defaults();
  g_assert_true(nw_params_set_string(s.params, "sigma-diff", "2.5", NULL));
  g_assert_true(nw_params_set_string(s.params, "similarity", "lcc", NULL));
  s.second_job = TRUE;
  s.device2 = NW_DEVICE_CPU;
  s.params2 = demons_defaults();
  g_assert_true(nw_params_set_string(s.params2, "levels", "2", NULL));
  g_assert_true(nw_params_set_string(s.params2, "tolerance", "1e-6", NULL));
  g_assert_true(nw_params_set_string(s.params2, "histogram-match", "yes", NULL));

  g_autofree char *path = nw_test_path("session.ini");
  NwSession r = {0};
  save_and_load(&s, path, &r);
  g_assert_cmpstr(r.method, ==, "demons");
  g_assert_cmpint(r.device, ==, NW_DEVICE_CUDA);
  g_assert_cmpstr(r.fixed_path, ==, s.fixed_path);
  g_assert_cmpstr(r.moving_path, ==, s.moving_path);
  g_assert_false(r.demo);
  g_assert_true(r.second_job);
  g_assert_cmpint(r.device2, ==, NW_DEVICE_CPU);
  g_assert_nonnull(r.params2);
  for (int i = 0; i < s.params->n; i++) {
    g_assert_cmpfloat(r.params->values[i], ==, s.params->values[i]);
    g_assert_cmpfloat(r.params2->values[i], ==, s.params2->values[i]);
  }
  /* a demo session with one job: no paths, no second table */
  nw_session_clear(&s);
  g_assert_null(s.method);
  s.method = g_strdup("demons");
  s.demo = TRUE;
  s.params = demons_defaults();
  save_and_load(&s, path, &r);
  g_assert_true(r.demo);
  g_assert_null(r.fixed_path);
  g_assert_null(r.moving_path);
  g_assert_false(r.second_job);
  g_assert_null(r.params2);
  g_assert_cmpint(r.device, ==, NW_DEVICE_AUTO);
  nw_session_clear(&s);
  nw_session_clear(&r);
}

static void expect_load_error(const char *name, const char *text, const char *message)
{
  g_autofree char *path = nw_test_path(name);
  write_text(path, text);
  NwSession s = {0};
  g_autoptr(GError) error = NULL;
  g_assert_false(nw_session_load(&s, path, &error));
  g_assert_nonnull(error);
  g_autofree char *expected = g_strdup_printf("%s: %s", path, message);
  if (!g_str_has_prefix(error->message, expected))
    g_error("expected '%s...', got '%s'", expected, error->message);
  g_assert_null(s.method);
  g_assert_null(s.params);
}

/* "affine-demons": the affine stage's settings are stored with the demons ones, by name. */
static void test_session_affine_demons(void)
{
  const NwMethodOps *ops = nw_method_lookup_table("affine-demons", NULL);
  g_assert_nonnull(ops);
  NwSession s = {0};
  s.method = g_strdup("affine-demons");
  s.device = NW_DEVICE_CPU;
  s.demo = TRUE;
  s.params = nw_params_new(ops->params, ops->n_params);
  static const char *const values[][2] = {
      {"affine-transform", "rigid"}, {"affine-metric", "mi"}, {"sigma-diff", "1.5"}};
  for (gsize i = 0; i < G_N_ELEMENTS(values); i++)
    g_assert_true(nw_params_set_string(s.params, values[i][0], values[i][1], NULL));
  g_autofree char *path = nw_test_path("session-affine-demons.ini");
  NwSession r = {0};
  save_and_load(&s, path, &r);
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  g_assert_nonnull(strstr(text, "affine-transform=rigid"));
  g_assert_nonnull(strstr(text, "affine-metric=mi"));
  g_assert_cmpstr(r.method, ==, "affine-demons");
  for (int i = 0; i < s.params->n; i++)
    g_assert_cmpfloat(r.params->values[i], ==, s.params->values[i]);
  g_assert_cmpfloat(nw_params_get(r.params, "affine-metric"), ==, 2);
  nw_session_clear(&s);
  nw_session_clear(&r);
}

static void test_session_errors(void)
{
  expect_load_error("unknown-key.ini",
                    "[session]\nversion=1\nmethod=demons\n[demons]\nsigma-dif=2\n",
                    "[demons]: unknown parameter(s) sigma-dif (known: ");
  expect_load_error("range.ini", "[session]\nversion=1\nmethod=demons\n[demons]\nsigma-diff=50\n",
                    "[demons]: sigma-diff: 50 is outside 0..20 voxel");
  expect_load_error("range2.ini",
                    "[session]\nversion=1\nmethod=demons\nsecond-job=true\n[demons@2]\nlevels=0\n",
                    "[demons@2]: levels: 0 is outside 1..8");
  expect_load_error("method.ini", "[session]\nversion=1\nmethod=warp-drive\n",
                    "[session] method=warp-drive: unknown method 'warp-drive'");
  expect_load_error("version.ini", "[session]\nversion=2\nmethod=demons\n",
                    "[session] version=2 is not supported (this build reads version 1)");
  expect_load_error("no-version.ini", "[session]\nmethod=demons\n", "[session] version is missing");
  expect_load_error("session-key.ini", "[session]\nversion=1\nmethod=demons\ncolour=blue\n",
                    "[session] unknown key colour=blue");
  expect_load_error("device.ini", "[session]\nversion=1\nmethod=demons\ndevice=tpu\n",
                    "[session] device=tpu: unknown device 'tpu'");
  expect_load_error("bool.ini", "[session]\nversion=1\nmethod=demons\ndemo=maybe\n",
                    "[session] demo=maybe is not true or false");
  expect_load_error("group.ini", "[session]\nversion=1\nmethod=demons\n[smooth]\nsigma=1\n",
                    "unknown group [smooth]");
  expect_load_error("none.ini", "just text\n", "");
  g_autofree char *missing = nw_test_path("missing.ini");
  NwSession s = {0};
  g_autoptr(GError) error = NULL;
  g_assert_false(nw_session_load(&s, missing, &error));
  g_assert_true(g_error_matches(error, NW_ERROR, NW_ERROR_IO));
  g_assert_true(g_str_has_prefix(error->message, missing));
}

static void test_presets(void)
{
  g_autoptr(NwParams) p = demons_defaults();
  g_autoptr(GPtrArray) names = NULL, paths = NULL;
  nw_presets_list("demons", &names, &paths);
  g_assert_cmpuint(names->len, ==, paths->len);
  int found = -1;
  for (guint i = 0; i < names->len; i++)
    if (g_strcmp0(g_ptr_array_index(names, i), "brain MRI") == 0)
      found = (int)i;
  g_assert_cmpint(found, >=, 0);
  const char *path = g_ptr_array_index(paths, found);
  g_assert_true(g_str_has_suffix(path, "demons-brain-mri.ini"));

  g_autoptr(GError) error = NULL;
  g_assert_true(nw_preset_apply(p, "demons", path, &error));
  g_assert_no_error(error);
  g_assert_cmpfloat(nw_params_get(p, "similarity"), ==, 1); /* lcc */
  g_assert_cmpfloat(nw_params_get(p, "sigma-diff"), ==, 1.5); /* the default is 1 */
  g_assert_cmpfloat(nw_params_get(p, "tolerance"), ==, 1e-6);
  g_assert_cmpfloat(nw_params_get(p, "levels"), ==, 3); /* not named: kept */

  g_autoptr(GPtrArray) none_names = NULL, none_paths = NULL;
  nw_presets_list("no-such-method", &none_names, &none_paths);
  g_assert_cmpuint(none_names->len, ==, 0);

  /* a file with one group of another name applies; a bad value names file and key */
  g_autofree char *one = nw_test_path("one-group.ini");
  write_text(one, "[mine]\nsigma-fluid=2\n");
  g_assert_true(nw_preset_apply(p, "demons", one, &error));
  g_assert_cmpfloat(nw_params_get(p, "sigma-fluid"), ==, 2);
  write_text(one, "[mine]\nsigma-fluid=99\n");
  g_assert_false(nw_preset_apply(p, "demons", one, &error));
  g_autofree char *expected = g_strdup_printf("%s: [mine]: sigma-fluid: 99 is outside 0..20", one);
  g_assert_true(g_str_has_prefix(error->message, expected));
  g_clear_error(&error);
  g_assert_cmpfloat(nw_params_get(p, "sigma-fluid"), ==, 2); /* unchanged */
  write_text(one, "[a]\nx=1\n[b]\ny=2\n");
  g_assert_false(nw_preset_apply(p, "demons", one, &error));
  g_autofree char *expected2 = g_strdup_printf("%s: no group [demons] (groups: a, b)", one);
  g_assert_cmpstr(error->message, ==, expected2);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  nw_methods_register_builtin();
  g_test_add_func("/scene-session/round-trip", test_session_round_trip);
  g_test_add_func("/scene-session/affine-demons", test_session_affine_demons);
  g_test_add_func("/scene-session/errors", test_session_errors);
  g_test_add_func("/scene-session/presets", test_presets);
  return g_test_run();
}
