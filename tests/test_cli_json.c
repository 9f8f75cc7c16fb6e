/* test_cli_json.c — neurowarp's JSON writers (app/json_out.c, on json-glib): string escaping,
 * number formatting that round-trips, null for NaN/Inf, compact objects; and the one-line
 * error message of neurowarp-cli (app/cli_common.c). Main thread, CPU only. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli_common.h"
#include "json_out.h"
#include "nw_error.h"
#include "testutil.h"

/* The text of a one-element array holding the value: "[x]" -> "x". */
static char *unwrap(JsonBuilder *b)
{
  g_autofree char *text = nw_json_to_string(b, FALSE);
  const size_t n = strlen(text);
  g_assert_cmpint(n, >=, 2);
  g_assert_cmpint(text[0], ==, '[');
  g_assert_cmpint(text[n - 1], ==, ']');
  return g_strndup(text + 1, n - 2);
}

static char *json_string(const char *text)
{
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_array(b);
  nw_json_add_string(b, text);
  json_builder_end_array(b);
  return unwrap(b);
}

static char *json_number(double v)
{
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_array(b);
  nw_json_add_number(b, v);
  json_builder_end_array(b);
  return unwrap(b);
}

static void test_strings(void)
{
  g_autofree char *a = json_string("a\"b\\c\nd\te\x01");
  g_assert_cmpstr(a, ==, "\"a\\\"b\\\\c\\nd\\te\\u0001\"");
  g_autofree char *utf8 = json_string("sigma σ");
  g_assert_cmpstr(utf8, ==, "\"sigma σ\"");
  g_autofree char *bad = json_string("x\xffy"); /* invalid UTF-8 is replaced, stays valid */
  g_assert_true(g_utf8_validate(bad, -1, NULL));
  g_autofree char *null_text = json_string(NULL);
  g_assert_cmpstr(null_text, ==, "\"\"");
}

static void test_numbers(void)
{
  g_autofree char *i = json_number(181.0), *neg = json_number(-3.0);
  g_assert_cmpstr(i, ==, "181");
  g_assert_cmpstr(neg, ==, "-3");
  const double values[] = {0.1, 1.0 / 3.0, -2.5e-12, 6.02214076e23, 3.0517578125e-05};
  for (size_t k = 0; k < G_N_ELEMENTS(values); k++) {
    g_autofree char *t = json_number(values[k]);
    g_assert_cmpfloat(g_ascii_strtod(t, NULL), ==, values[k]); /* %.17g round-trips */
    g_assert_null(strchr(t, ','));
  }
  g_autofree char *nan_text = json_number(NAN), *inf_text = json_number(-INFINITY);
  g_assert_cmpstr(nan_text, ==, "null");
  g_assert_cmpstr(inf_text, ==, "null");
}

static void test_objects(void)
{
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  nw_json_member_number(b, "iteration", 3);
  nw_json_member_number(b, "rms_change", 0.5);
  nw_json_member_string(b, "device", "cpu");
  json_builder_end_object(b);
  g_autofree char *text = nw_json_to_string(b, FALSE);
  g_assert_cmpstr(text, ==, "{\"iteration\":3,\"rms_change\":0.5,\"device\":\"cpu\"}");
}

/* Enumerations and booleans by name, numbers as numbers. */
static void test_params(void)
{
  static const char *const choices[] = {"ssd", "lcc", NULL};
  const NwParamSpec specs[] = {
      {"sigma", NW_PARAM_DOUBLE, 1.5, 0, 10, "mm", "", TRUE, NULL},
      {"similarity", NW_PARAM_ENUM, 1, 0, 1, "", "", FALSE, choices},
      {"match", NW_PARAM_BOOL, 1, 0, 1, "", "", FALSE, NULL},
  };
  g_autoptr(NwParams) p = nw_params_new(specs, G_N_ELEMENTS(specs));
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  for (int i = 0; i < p->n; i++) {
    json_builder_set_member_name(b, specs[i].name);
    nw_json_add_param(b, p, i);
  }
  json_builder_end_object(b);
  g_autofree char *text = nw_json_to_string(b, FALSE);
  g_assert_cmpstr(text, ==, "{\"sigma\":1.5,\"similarity\":\"lcc\",\"match\":\"true\"}");
}

/* nw_cli_fail prints one line (newlines flattened) and maps CANCELLED to 130. */
static void test_fail_codes(void)
{
  if (g_test_subprocess()) {
    g_autoptr(GError) e = g_error_new(NW_ERROR, NW_ERROR_FORMAT, "a.nii: bad\nheader");
    g_autoptr(GError) c = g_error_new(NW_ERROR, NW_ERROR_CANCELLED, "smooth: cancelled");
    int code_e = nw_cli_fail(e); /* in this order: argument evaluation order is unspecified */
    int code_c = nw_cli_fail(c);
    printf("%d %d\n", code_e, code_c);
    return;
  }
  g_test_trap_subprocess(NULL, 0, 0);
  g_test_trap_assert_passed();
  g_test_trap_assert_stdout("1 130\n");
  g_test_trap_assert_stderr("neurowarp-cli: a.nii: bad header\n"
                            "neurowarp-cli: smooth: cancelled\n");
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cli/json/strings", test_strings);
  g_test_add_func("/cli/json/numbers", test_numbers);
  g_test_add_func("/cli/json/objects", test_objects);
  g_test_add_func("/cli/json/params", test_params);
  g_test_add_func("/cli/fail-codes", test_fail_codes);
  return g_test_run();
}
