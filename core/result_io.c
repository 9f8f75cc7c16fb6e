/* result_io.c — a method's result volumes to PREFIX_NAME.nii.gz files (result_io.h).
 * Any thread; CPU only. */
#include "result_io.h"

#include <string.h>

#include "nw_error.h"

static gboolean write_one(const NwVolume *v, const char *name, const char *prefix,
                          NwFieldConvention conv, GPtrArray *written, GError **error)
{
  g_autofree char *path = g_strdup_printf("%s_%s.nii.gz", prefix, name);
  gboolean ok;
  if (v->nc == 3)
    ok = nw_nifti_write_field(path, v, conv, error);
  else
    ok = nw_nifti_write(path, v, strcmp(name, "labels") == 0 ? NW_DT_INT32 : NW_DT_FLOAT32,
                        FALSE, error);
  if (ok && written != NULL)
    g_ptr_array_add(written, g_steal_pointer(&path));
  return ok;
}

static gboolean is_required(const char *const *required, const char *name)
{
  return required != NULL && g_strv_contains(required, name);
}

gboolean nw_result_write(const NwMethodResult *res, const char *method, const char *prefix,
                         const char *const *required, NwFieldConvention conv, GPtrArray *written,
                         GError **error)
{
  g_return_val_if_fail(res != NULL && prefix != NULL, FALSE);
  for (gsize i = 0; required != NULL && required[i] != NULL; i++)
    if (nw_method_result_get(res, required[i]) == NULL) {
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: the job returned no '%s'",
                  method != NULL ? method : "method", required[i]);
      return FALSE;
    }
  for (gsize i = 0; required != NULL && required[i] != NULL; i++)
    if (!write_one(nw_method_result_get(res, required[i]), required[i], prefix, conv, written,
                   error))
      return FALSE;
  for (guint i = 0; i < res->names->len; i++) {
    const char *name = g_ptr_array_index(res->names, i);
    if (!is_required(required, name) &&
        !write_one(g_ptr_array_index(res->volumes, i), name, prefix, conv, written, error))
      return FALSE;
  }
  return TRUE;
}
