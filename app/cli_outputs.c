/* cli_outputs.c — see cli_outputs.h. Main thread. */
#include "cli_outputs.h"

#include <string.h>

#include "nw_error.h"

/* "a, b, c or all" */
static char *expected(const char *const *valid)
{
  GString *s = g_string_new(NULL);
  for (gsize i = 0; valid[i] != NULL; i++)
    g_string_append_printf(s, "%s%s", i > 0 ? ", " : "", valid[i]);
  g_string_append(s, " or all");
  return g_string_free(s, FALSE);
}

gboolean nw_cli_outputs_parse(const char *text, const char *const *valid, guint32 *mask,
                              gboolean *all, GError **error)
{
  g_return_val_if_fail(text != NULL && g_strv_length((char **)valid) <= 32, FALSE);
  *mask = 0;
  *all = FALSE;
  g_auto(GStrv) items = g_strsplit(text, ",", -1);
  for (gsize i = 0; items[i] != NULL; i++) {
    const char *name = g_strstrip(items[i]);
    gsize k = 0;
    while (valid[k] != NULL && strcmp(valid[k], name) != 0)
      k++;
    if (valid[k] != NULL) {
      *mask |= 1u << k;
      continue;
    }
    if (strcmp(name, "all") == 0) {
      *all = TRUE;
      continue;
    }
    g_autofree char *names = expected(valid);
    if (name[0] == '\0')
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                  "--outputs: an empty name in '%s': expected %s", text, names);
    else
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "--outputs: unknown output '%s': expected %s",
                  name, names);
    return FALSE;
  }
  return TRUE;
}

const char **nw_cli_outputs_names(const char *const *valid, guint32 mask)
{
  const char **names = g_new0(const char *, g_strv_length((char **)valid) + 1);
  gsize n = 0;
  for (gsize i = 0; valid[i] != NULL; i++)
    if (mask & (1u << i))
      names[n++] = valid[i];
  return names;
}

gboolean nw_cli_outputs_claim(NwOutputs *o, const char *prefix, const char *const *valid,
                              guint32 mask, GError **error)
{
  for (gsize i = 0; valid[i] != NULL; i++) { /* the names nw_result_write_names gives */
    g_autofree char *path = g_strdup_printf("%s_%s.nii.gz", prefix, valid[i]);
    if (!((mask & (1u << i)) ? nw_outputs_claim(o, path, error)
                             : nw_outputs_claim_stale(o, path, error)))
      return FALSE;
  }
  return TRUE;
}
