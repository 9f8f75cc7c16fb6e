/* test_cli_json.c — the JSON writers of neurowarp-cli (app/cli_common.c): string escaping,
 * number formatting that round-trips, null for NaN/Inf, and the one-line error message.
 * Main thread, CPU only. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli_common.h"
#include "nw_error.h"
#include "testutil.h"

static char *json_string(const char *text)
{
  GString *s = g_string_new(NULL);
  nw_json_string(s, text);
  return g_string_free(s, FALSE);
}

static char *json_number(double v)
{
  GString *s = g_string_new(NULL);
  nw_json_number(s, v);
  return g_string_free(s, FALSE);
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

static void test_keys(void)
{
  GString *s = g_string_new("{");
  nw_json_key(s, TRUE, "iteration");
  nw_json_number(s, 3);
  nw_json_key(s, FALSE, "rms_change");
  nw_json_number(s, 0.5);
  g_string_append_c(s, '}');
  g_assert_cmpstr(s->str, ==, "{\"iteration\":3,\"rms_change\":0.5}");
  g_string_free(s, TRUE);
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
  g_test_add_func("/cli/json/keys", test_keys);
  g_test_add_func("/cli/fail-codes", test_fail_codes);
  return g_test_run();
}
