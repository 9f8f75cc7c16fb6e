/* test_gui_frictions.c — issue 15's small frictions, checked on the running application
 * under X: the sidebar starts on the Layers page with its switcher agreeing. Skips (77)
 * without a DISPLAY. */
#include <stdio.h>
#include <string.h>

#include "gui_testutil.h"
#include "testutil.h"

/* The window as it comes up on the demo case: the Layers page is shown and its button is
 * the pressed one; switching to Run moves both. */
static void test_start_page(void)
{
  g_autofree char *script =
      nw_gui_write_script("start.txt", "sidebar\nsidebar run\nsidebar\nquit\n");
  const char *args[] = {"--script", script, NULL};
  g_autofree char *out = NULL;
  g_autofree char *err = nw_gui_run_out(args, 0, &out);
  const char *first = strstr(out, "sidebar: ");
  g_assert_nonnull(first);
  g_assert_true(g_str_has_prefix(first, "sidebar: page layers · switch Layers\n"));
  g_assert_nonnull(strstr(first + 1, "sidebar: page run · switch Run\n"));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  if (g_getenv("DISPLAY") == NULL || g_getenv("DISPLAY")[0] == '\0') {
    printf("SKIP: no DISPLAY (run under xvfb-run)\n");
    return NW_TEST_SKIP;
  }
  g_test_add_func("/gui/start-page", test_start_page);
  return g_test_run();
}
