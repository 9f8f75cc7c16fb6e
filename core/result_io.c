/* result_io.c — a method's result volumes to PREFIX_NAME.nii.gz files in an output set
 * (result_io.h).
 * Any thread; CPU only. */
#include "result_io.h"

#include <string.h>

#include "nw_error.h"
#include "transform_io.h"

static gboolean write_one(NwOutputs *out, const NwVolume *v, const char *name, const char *prefix,
                          NwFieldConvention conv, GError **error)
{
  g_autofree char *path = g_strdup_printf("%s_%s.nii.gz", prefix, name);
  if (v->nc == 3)
    return nw_nifti_write_field_to(out, path, v, conv, error);
  return nw_nifti_write_to(out, path, v, strcmp(name, "labels") == 0 ? NW_DT_INT32 : NW_DT_FLOAT32,
                           FALSE, error);
}

gboolean nw_result_claim(NwOutputs *out, const char *prefix, const char *const *names,
                         GError **error)
{
  for (gsize i = 0; names != NULL && names[i] != NULL; i++) {
    g_autofree char *path = g_strdup_printf("%s_%s.nii.gz", prefix, names[i]);
    if (!nw_outputs_claim(out, path, error))
      return FALSE;
  }
  return TRUE;
}

static gboolean is_required(const char *const *required, const char *name)
{
  return required != NULL && g_strv_contains(required, name);
}

/* Every name of required in res, else "METHOD: the job returned no 'NAME'". */
static gboolean check_required(const NwMethodResult *res, const char *method,
                               const char *const *required, GError **error)
{
  for (gsize i = 0; required != NULL && required[i] != NULL; i++)
    if (nw_method_result_get(res, required[i]) == NULL) {
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: the job returned no '%s'",
                  method != NULL ? method : "method", required[i]);
      return FALSE;
    }
  return TRUE;
}

gboolean nw_result_write_names(NwOutputs *out, const NwMethodResult *res, const char *method,
                               const char *prefix, const char *const *names, NwFieldConvention conv,
                               GError **error)
{
  g_return_val_if_fail(out != NULL && res != NULL && prefix != NULL, FALSE);
  if (!check_required(res, method, names, error))
    return FALSE;
  for (gsize i = 0; names != NULL && names[i] != NULL; i++)
    if (!write_one(out, nw_method_result_get(res, names[i]), names[i], prefix, conv, error))
      return FALSE;
  return TRUE;
}

gboolean nw_result_write(NwOutputs *out, const NwMethodResult *res, const char *method,
                         const char *prefix, const char *const *required, NwFieldConvention conv,
                         GError **error)
{
  if (!nw_result_write_names(out, res, method, prefix, required, conv, error))
    return FALSE;
  for (guint i = 0; i < res->names->len; i++) {
    const char *name = g_ptr_array_index(res->names, i);
    if (!is_required(required, name) &&
        !write_one(out, g_ptr_array_index(res->volumes, i), name, prefix, conv, error))
      return FALSE;
  }
  return TRUE;
}

gboolean nw_result_write_transform(NwOutputs *out, const NwMethodResult *res, const char *prefix,
                                   const NwVolume *fixed, const NwVolume *moving, GError **error)
{
  const double *t = nw_method_result_get_values(res, "transform", NULL);
  const double *c = nw_method_result_get_values(res, "centre", NULL);
  if (t == NULL || c == NULL)
    return TRUE;
  const int dim = fixed->nz == 1 ? 2 : 3;
  g_autofree char *txt = g_strconcat(prefix, "_affine.txt", NULL);
  g_autofree char *mat = g_strconcat(prefix, "_affine.mat", NULL);
  g_autofree char *fsl = g_strconcat(prefix, "_fsl.mat", NULL);
  return nw_transform_write_itk(out, txt, t, c, dim, error) &&
         nw_transform_write_itk(out, mat, t, c, dim, error) &&
         nw_transform_write_fsl(out, fsl, t, fixed, moving, error);
}
