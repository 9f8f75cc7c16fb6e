/* test_params.c — parameter tables (core/params.c): defaults, validation with exact messages,
 * parsing (numbers, booleans, enum names, "name=value"), formatting, key-file round trip,
 * unknown keys, and non-live change detection. CPU only, single thread. */
#include <math.h>
#include <string.h>

#include "atomic_file.h"
#include "nw_error.h"
#include "params.h"
#include "testutil.h"

static const char *const modes[] = {"forward", "symmetric", "inverse", NULL};

/* A demons-like table: one of each type, live and not. */
static const NwParamSpec specs[] = {
    {"sigma-fluid", NW_PARAM_DOUBLE, 1.5, 0.0, 20.0, "voxel", "Fluid regularisation width.", TRUE,
     NULL},
    {"levels", NW_PARAM_INT, 3.0, 1.0, 8.0, "", "Pyramid levels.", FALSE, NULL},
    {"use-mask", NW_PARAM_BOOL, 0.0, 0.0, 1.0, "", "Restrict the metric to a mask.", TRUE, NULL},
    {"mode", NW_PARAM_ENUM, 1.0, 0.0, 2.0, "", "Which way the update goes.", FALSE, modes},
};
#define N_SPECS ((int)G_N_ELEMENTS(specs))

static void expect_error(GError *error, int code, const char *message)
{
  g_assert_nonnull(error);
  g_assert_true(error->domain == NW_ERROR);
  g_assert_cmpint(error->code, ==, code);
  g_assert_cmpstr(error->message, ==, message);
}

static void test_defaults(void)
{
  g_autoptr(NwParams) p = nw_params_new(specs, N_SPECS);
  g_assert_cmpint(p->n, ==, 4);
  g_assert_cmpfloat(nw_params_get(p, "sigma-fluid"), ==, 1.5);
  g_assert_cmpint(nw_params_get_int(p, "levels"), ==, 3);
  g_assert_cmpint(nw_params_get_int(p, "use-mask"), ==, 0);
  g_assert_cmpint(nw_params_get_int(p, "mode"), ==, 1);
  g_assert_cmpint(nw_params_find(p, "mode"), ==, 3);
  g_assert_cmpint(nw_params_find(p, "nope"), ==, -1);

  const char *expected[] = {"1.5", "3", "false", "symmetric"};
  for (int i = 0; i < N_SPECS; i++) {
    g_autofree char *text = nw_params_format(p, i);
    g_assert_cmpstr(text, ==, expected[i]);
  }

  /* A copy is deep: changing it leaves the original alone. */
  g_autoptr(NwParams) c = nw_params_copy(p);
  g_assert_true(nw_params_set(c, "levels", 5, NULL));
  g_assert_cmpint(nw_params_get_int(p, "levels"), ==, 3);
  g_assert_cmpint(nw_params_get_int(c, "levels"), ==, 5);
}

static void test_set_validates(void)
{
  g_autoptr(NwParams) p = nw_params_new(specs, N_SPECS);
  GError *error = NULL;

  g_assert_true(nw_params_set(p, "sigma-fluid", 20.0, &error)); /* inclusive upper bound */
  g_assert_no_error(error);
  g_assert_true(nw_params_set(p, "sigma-fluid", 0.0, &error));
  g_assert_cmpfloat(nw_params_get(p, "sigma-fluid"), ==, 0.0);

  g_assert_false(nw_params_set(p, "sigma-fluid", 99.0, &error));
  expect_error(error, NW_ERROR_INVALID, "sigma-fluid: 99 is outside 0..20 voxel");
  g_clear_error(&error);
  g_assert_cmpfloat(nw_params_get(p, "sigma-fluid"), ==, 0.0); /* unchanged */

  g_assert_false(nw_params_set(p, "sigma-fluid", -0.25, &error));
  expect_error(error, NW_ERROR_INVALID, "sigma-fluid: -0.25 is outside 0..20 voxel");
  g_clear_error(&error);

  g_assert_false(nw_params_set(p, "sigma-fluid", NAN, &error));
  g_assert_nonnull(strstr(error->message, "sigma-fluid: "));
  g_assert_nonnull(strstr(error->message, " is not a finite number"));
  g_clear_error(&error);

  g_assert_false(nw_params_set(p, "levels", 9, &error));
  expect_error(error, NW_ERROR_INVALID, "levels: 9 is outside 1..8"); /* no unit, no space */
  g_clear_error(&error);

  g_assert_false(nw_params_set(p, "levels", 2.5, &error));
  expect_error(error, NW_ERROR_INVALID, "levels: 2.5 is not a whole number");
  g_clear_error(&error);

  g_assert_false(nw_params_set(p, "use-mask", 2, &error));
  expect_error(error, NW_ERROR_INVALID, "use-mask: 2 is not a boolean (0 or 1)");
  g_clear_error(&error);

  g_assert_false(nw_params_set(p, "mode", 3, &error));
  expect_error(error, NW_ERROR_INVALID,
               "mode: 3 is not a choice index 0..2 (forward, symmetric, inverse)");
  g_clear_error(&error);

  g_assert_false(nw_params_set(p, "sigma", 1.0, &error));
  expect_error(error, NW_ERROR_INVALID,
               "unknown parameter 'sigma' (known: sigma-fluid, levels, use-mask, mode)");
  g_clear_error(&error);
}

static void test_set_string(void)
{
  g_autoptr(NwParams) p = nw_params_new(specs, N_SPECS);
  GError *error = NULL;

  g_assert_true(nw_params_set_string(p, "mode", "inverse", &error));
  g_assert_no_error(error);
  g_assert_cmpint(nw_params_get_int(p, "mode"), ==, 2);
  g_assert_true(nw_params_set_string(p, "mode", "Forward", &error)); /* any case */
  g_assert_cmpint(nw_params_get_int(p, "mode"), ==, 0);
  g_assert_false(nw_params_set_string(p, "mode", "backward", &error));
  expect_error(error, NW_ERROR_INVALID,
               "mode: 'backward' is not one of forward, symmetric, inverse");
  g_clear_error(&error);

  const char *yes[] = {"true", "YES", "on", "1"}, *no[] = {"false", "No", "off", "0"};
  for (int i = 0; i < 4; i++) {
    g_assert_true(nw_params_set_string(p, "use-mask", yes[i], NULL));
    g_assert_cmpint(nw_params_get_int(p, "use-mask"), ==, 1);
    g_assert_true(nw_params_set_string(p, "use-mask", no[i], NULL));
    g_assert_cmpint(nw_params_get_int(p, "use-mask"), ==, 0);
  }
  g_assert_false(nw_params_set_string(p, "use-mask", "maybe", &error));
  expect_error(error, NW_ERROR_INVALID,
               "use-mask: 'maybe' is not a boolean (true, false, yes, no, on, off, 1, 0)");
  g_clear_error(&error);

  /* name=value form, with blanks around either side. */
  g_assert_true(nw_params_set_string(p, NULL, " sigma-fluid = 2.5 ", &error));
  g_assert_no_error(error);
  g_assert_cmpfloat(nw_params_get(p, "sigma-fluid"), ==, 2.5);
  g_assert_true(nw_params_set_string(p, NULL, "levels=5", &error));
  g_assert_cmpint(nw_params_get_int(p, "levels"), ==, 5);
  g_assert_true(nw_params_set_string(p, NULL, "mode=symmetric", &error));
  g_assert_cmpint(nw_params_get_int(p, "mode"), ==, 1);

  g_assert_false(nw_params_set_string(p, NULL, "levels=abc", &error));
  expect_error(error, NW_ERROR_INVALID, "levels: 'abc' is not a number");
  g_clear_error(&error);
  g_assert_false(nw_params_set_string(p, "sigma-fluid", "1.5mm", &error));
  expect_error(error, NW_ERROR_INVALID, "sigma-fluid: '1.5mm' is not a number");
  g_clear_error(&error);
  g_assert_false(nw_params_set_string(p, "sigma-fluid", "", &error));
  expect_error(error, NW_ERROR_INVALID, "sigma-fluid: '' is not a number");
  g_clear_error(&error);
  g_assert_false(nw_params_set_string(p, NULL, "levels", &error));
  expect_error(error, NW_ERROR_INVALID, "'levels' is not of the form name=value");
  g_clear_error(&error);
  g_assert_false(nw_params_set_string(p, NULL, "level=2", &error));
  g_assert_nonnull(strstr(error->message, "unknown parameter 'level'"));
  g_clear_error(&error);
  /* Parsed text is still range-checked. */
  g_assert_false(nw_params_set_string(p, NULL, "sigma-fluid=1e3", &error));
  expect_error(error, NW_ERROR_INVALID, "sigma-fluid: 1000 is outside 0..20 voxel");
  g_clear_error(&error);
  g_assert_cmpfloat(nw_params_get(p, "sigma-fluid"), ==, 2.5);
}

static void test_key_file_round_trip(void)
{
  g_autoptr(NwParams) p = nw_params_new(specs, N_SPECS);
  g_assert_true(nw_params_set(p, "sigma-fluid", 0.125, NULL));
  g_assert_true(nw_params_set(p, "levels", 6, NULL));
  g_assert_true(nw_params_set(p, "use-mask", 1, NULL));
  g_assert_true(nw_params_set(p, "mode", 2, NULL));

  g_autoptr(GKeyFile) kf = g_key_file_new();
  nw_params_to_key_file(p, kf, "demons");
  g_autofree char *text = g_key_file_to_data(kf, NULL, NULL);
  g_assert_nonnull(strstr(text, "[demons]\n"));
  g_assert_nonnull(strstr(text, "sigma-fluid=0.125\n"));
  g_assert_nonnull(strstr(text, "levels=6\n"));
  g_assert_nonnull(strstr(text, "use-mask=true\n"));
  g_assert_nonnull(strstr(text, "mode=inverse\n"));
  g_assert_nonnull(strstr(text, "#Pyramid levels.\n")); /* tooltips as comments */

  /* Through a file written atomically, read back by GLib into defaults. */
  g_autofree char *path = nw_test_path("params.ini");
  g_assert_true(nw_write_file_atomically(path, text, -1, NULL));
  g_autoptr(GKeyFile) back = g_key_file_new();
  GError *error = NULL;
  g_assert_true(g_key_file_load_from_file(back, path, G_KEY_FILE_KEEP_COMMENTS, &error));
  g_assert_no_error(error);
  g_autoptr(NwParams) q = nw_params_new(specs, N_SPECS);
  g_assert_true(nw_params_from_key_file(q, back, "demons", &error));
  g_assert_no_error(error);
  for (int i = 0; i < N_SPECS; i++)
    g_assert_cmpfloat(q->values[i], ==, p->values[i]);
}

static void test_key_file_missing_and_unknown(void)
{
  g_autoptr(NwParams) p = nw_params_new(specs, N_SPECS);
  g_autoptr(GKeyFile) kf = g_key_file_new();
  GError *error = NULL;

  /* No group: nothing changes. Some keys: only those change. */
  g_assert_true(nw_params_from_key_file(p, kf, "demons", &error));
  g_assert_no_error(error);
  g_assert_true(g_key_file_load_from_data(kf, "[demons]\nlevels=2\n", -1, 0, NULL));
  g_assert_true(nw_params_from_key_file(p, kf, "demons", &error));
  g_assert_cmpint(nw_params_get_int(p, "levels"), ==, 2);
  g_assert_cmpfloat(nw_params_get(p, "sigma-fluid"), ==, 1.5);

  /* Unknown keys are all named; nothing is applied. */
  g_autoptr(GKeyFile) bad = g_key_file_new();
  g_assert_true(g_key_file_load_from_data(bad, "[demons]\nlevels=4\nsigma-fuild=2\nsmoothing=1\n",
                                          -1, 0, NULL));
  g_assert_false(nw_params_from_key_file(p, bad, "demons", &error));
  expect_error(error, NW_ERROR_INVALID,
               "[demons]: unknown parameter(s) sigma-fuild, smoothing (known: sigma-fluid, "
               "levels, use-mask, mode)");
  g_clear_error(&error);
  g_assert_cmpint(nw_params_get_int(p, "levels"), ==, 2);

  /* A bad value is named with its group, and the earlier good key is not applied either. */
  g_autoptr(GKeyFile) range = g_key_file_new();
  g_assert_true(
      g_key_file_load_from_data(range, "[demons]\nmode=forward\nlevels=99\n", -1, 0, NULL));
  g_assert_false(nw_params_from_key_file(p, range, "demons", &error));
  expect_error(error, NW_ERROR_INVALID, "[demons]: levels: 99 is outside 1..8");
  g_clear_error(&error);
  g_assert_cmpint(nw_params_get_int(p, "mode"), ==, 1);
  g_assert_cmpint(nw_params_get_int(p, "levels"), ==, 2);
}

static void test_non_live_change(void)
{
  g_autoptr(NwParams) old = nw_params_new(specs, N_SPECS);
  g_autoptr(NwParams) p = nw_params_copy(old);
  g_assert_null(nw_params_first_non_live_change(old, p));
  g_assert_true(nw_params_set(p, "sigma-fluid", 3.0, NULL)); /* live */
  g_assert_true(nw_params_set(p, "use-mask", 1, NULL));      /* live */
  g_assert_null(nw_params_first_non_live_change(old, p));
  g_assert_true(nw_params_set(p, "mode", 0, NULL));
  g_assert_cmpstr(nw_params_first_non_live_change(old, p), ==, "mode");
  g_assert_true(nw_params_set(p, "levels", 4, NULL)); /* earlier in the table: named first */
  g_assert_cmpstr(nw_params_first_non_live_change(old, p), ==, "levels");
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/params/defaults", test_defaults);
  g_test_add_func("/params/set-validates", test_set_validates);
  g_test_add_func("/params/set-string", test_set_string);
  g_test_add_func("/params/key-file-round-trip", test_key_file_round_trip);
  g_test_add_func("/params/key-file-missing-and-unknown", test_key_file_missing_and_unknown);
  g_test_add_func("/params/non-live-change", test_non_live_change);
  return g_test_run();
}
