/* nw_script_inspect.c — script commands that read back or drive what the window shows the
 * user, for tests and the user guide (see nw_script.h): the sidebar page and its switcher.
 * They print what the widgets themselves hold, not what the code meant to put there.
 * Main thread only. */
#include <stdio.h>
#include <string.h>

#include "nw_script_private.h"

/* sidebar [layers|run]: switch the page, or print "sidebar: page P · switch S". */
static gboolean run_sidebar(NwWindow *w, char **t, int n, const char *line, GError **error)
{
  if (n == 2) {
    if (strcmp(t[1], "layers") != 0 && strcmp(t[1], "run") != 0)
      return nw_script_bad(error, line, "expected: sidebar [layers|run]");
    nw_window_show_sidebar_page(w, t[1]);
    return TRUE;
  }
  const char *page = nw_window_get_sidebar_page(w), *sw = nw_window_get_sidebar_switch(w);
  printf("sidebar: page %s · switch %s\n", page != NULL ? page : "none", sw != NULL ? sw : "none");
  fflush(stdout);
  return TRUE;
}

int nw_script_inspect(NwWindow *w, char **t, int n, const char *line, GError **error)
{
  if (strcmp(t[0], "sidebar") == 0 && n <= 2)
    return run_sidebar(w, t, n, line, error);
  return -1;
}
