/* nw_loader.c — reading files and making the demo into layers (see nw_loader.h). The
 * readers run on a GTask worker thread; layers are handed to the main thread whole. */
#include "nw_loader.h"

#include <string.h>

#include "demo.h"
#include "field.h"
#include "io_image.h"
#include "io_mesh.h"
#include "io_nifti.h"
#include "marching_cubes.h"
#include "nw_error.h"
#include "nw_layer.h"
#include "nw_loader_private.h"
#include "resample.h"
#include "smooth.h"

static GPtrArray *layer_array(void)
{
  return g_ptr_array_new_with_free_func(g_object_unref);
}

/* The field itself as a grid, and a second, hidden layer with its log-Jacobian map. */
static void add_field_layers(GPtrArray *out, const char *name, NwVolume *field, const char *path)
{
  NwVolume *copy = nw_volume_copy(field);
  NwLayer *grid = nw_layer_new_volume(NW_LAYER_FIELD, name, field);
  nw_layer_set_field_show(grid, NW_FIELD_SHOW_GRID);
  nw_layer_set_path(grid, path);
  g_ptr_array_add(out, grid);
  g_autofree char *jname = g_strdup_printf("%s: log-Jacobian", name);
  NwLayer *jac = nw_layer_new_volume(NW_LAYER_FIELD, jname, copy);
  nw_layer_set_field_show(jac, NW_FIELD_SHOW_LOG_JACOBIAN);
  nw_layer_set_opacity(jac, 0.75f);
  nw_layer_set_visible(jac, FALSE);
  nw_layer_set_path(jac, path);
  g_ptr_array_add(out, jac);
}

static gboolean name_suggests_labels(const char *base)
{
  static const char *const words[] = {"label", "aal", "seg", "aseg", "parc", "atlas"};
  g_autofree char *lower = g_ascii_strdown(base, -1);
  for (size_t i = 0; i < G_N_ELEMENTS(words); i++)
    if (strstr(lower, words[i]) != NULL)
      return TRUE;
  return FALSE;
}

/* A Jacobian map by its name, as neurowarp and other tools write them (PREFIX_jacobian,
 * jac.nii.gz, logjacobian, log_jac...): 1 det J, 2 log det J, 0 neither. */
static int jacobian_kind(const char *base)
{
  g_autofree char *lower = g_ascii_strdown(base, -1);
  if (strstr(lower, "jac") == NULL)
    return 0;
  return strstr(lower, "logjac") != NULL || strstr(lower, "log_jac") != NULL ||
                 strstr(lower, "log-jac") != NULL
             ? 2
             : 1;
}

static gboolean is_field_header(const NwNiftiInfo *info)
{
  if (info->ndim >= 5 && info->dim[5] == 3)
    return TRUE;
  return info->ndim == 4 && info->dim[4] == 3 &&
         (info->intent_code == 1006 || info->intent_code == 1007 ||
          strcmp(info->intent_name, "NREG_TRANS") == 0);
}

GPtrArray *nw_load_file(const char *path, GError **error)
{
  g_autofree char *base = g_path_get_basename(path);
  g_autoptr(GPtrArray) out = layer_array();
  if (!g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: no such file", path);
    return NULL;
  }
  if (g_str_has_suffix(path, ".json"))
    return nw_load_run_summary(path, error);
  if (nw_mesh_format_from_name(path) != NW_MESH_AUTO) {
    NwSurface *s = nw_mesh_read(path, error);
    if (s == NULL)
      return NULL;
    NwLayer *l = nw_layer_new_surface(base, s);
    nw_layer_set_path(l, path);
    g_ptr_array_add(out, l);
    return g_steal_pointer(&out);
  }
  NwNiftiInfo info;
  if (!nw_image_is_2d_file(path) && nw_nifti_read_info(path, &info, NULL) &&
      is_field_header(&info)) {
    NwVolume *f = nw_nifti_read_field(path, error);
    if (f == NULL)
      return NULL;
    add_field_layers(out, base, f, path);
    return g_steal_pointer(&out);
  }
  NwVolume *v = nw_volume_read_any(path, error);
  if (v == NULL)
    return NULL;
  NwLayerKind kind = name_suggests_labels(base) && nw_volume_looks_like_labels(v) ? NW_LAYER_LABELS
                                                                                  : NW_LAYER_IMAGE;
  NwLayer *l = nw_layer_new_volume(kind, base, v);
  nw_layer_set_path(l, path);
  if (kind == NW_LAYER_LABELS)
    nw_layer_set_label_table(l, nw_label_table_find_for(path));
  if (kind == NW_LAYER_IMAGE && jacobian_kind(base) != 0)
    nw_layer_show_as_jacobian(l, jacobian_kind(base) == 2);
  g_ptr_array_add(out, l);
  return g_steal_pointer(&out);
}

/* Brain surface: marching cubes of the image smoothed by 1.5 mm, at nw_layer_surface_iso. */
static NwLayer *brain_surface(const NwVolume *fixed, float iso, GError **error)
{
  g_autoptr(NwVolume) smooth = nw_volume_copy(fixed);
  if (!nw_smooth_gaussian_mm(smooth, 1.5, error))
    return NULL;
  NwSurface *s = nw_marching_cubes(smooth, iso, error);
  if (s == NULL)
    return NULL;
  NwLayer *l = nw_layer_new_surface("brain surface", s);
  return l;
}

GPtrArray *nw_load_demo(double spacing_mm, GError **error)
{
  NwDemoOptions opt;
  nw_demo_options_init(&opt);
  NwDemoCase c = {0};
  if (!nw_demo_make(&opt, spacing_mm, &c, error)) {
    nw_error_prefix(error, "demo case");
    return NULL;
  }
  g_autoptr(GPtrArray) out = layer_array();
  NwVolume *warped = nw_volume_new_like(c.moving, 1, error);
  if (warped == NULL) {
    nw_demo_case_clear(&c);
    return NULL;
  }
  /* warped(x) = moving(x + u(x)): with the true field it should match fixed */
  nw_warp(warped, c.moving, c.true_field, NW_INTERP_LINEAR);
  NwLayer *fixed = nw_layer_new_volume(NW_LAYER_IMAGE, "fixed", g_steal_pointer(&c.fixed));
  NwLayer *moving = nw_layer_new_volume(NW_LAYER_IMAGE, "moving", g_steal_pointer(&c.moving));
  /* one window for both, so that blend and difference compare like with like */
  nw_layer_set_style(moving, nw_layer_get_style(fixed));
  NwLayer *w = nw_layer_new_volume(NW_LAYER_IMAGE, "warped (true field)", warped);
  nw_layer_set_style(w, nw_layer_get_style(fixed));
  nw_layer_set_visible(w, FALSE);
  NwLayer *labels =
      nw_layer_new_volume(NW_LAYER_LABELS, "labels", g_steal_pointer(&c.fixed_labels));
  nw_layer_set_visible(labels, FALSE);
  if (!c.is_phantom) /* AAL: mricron-data's names and colours */
    nw_layer_set_label_table(labels, nw_label_table_find_for(NW_MRICRON_TEMPLATES "/aal.nii.gz"));
  /* a run warps these with the moving image and reports Dice against the fixed labels */
  NwLayer *mlabels =
      nw_layer_new_volume(NW_LAYER_LABELS, "moving labels", g_steal_pointer(&c.moving_labels));
  nw_layer_set_visible(mlabels, FALSE);
  g_ptr_array_add(out, fixed);
  g_ptr_array_add(out, moving);
  g_ptr_array_add(out, w);
  g_ptr_array_add(out, labels);
  g_ptr_array_add(out, mlabels);
  add_field_layers(out, "true field", g_steal_pointer(&c.true_field), NULL);
  nw_layer_set_visible(g_ptr_array_index(out, out->len - 2), FALSE); /* the field's grid */
  NwLayer *surf = brain_surface(nw_layer_get_volume(fixed), nw_layer_surface_iso(fixed), error);
  nw_demo_case_clear(&c);
  if (surf == NULL) {
    nw_error_prefix(error, "demo brain surface");
    return NULL;
  }
  g_ptr_array_add(out, surf);
  return g_steal_pointer(&out);
}

static void file_thread(GTask *task, gpointer src, gpointer data, GCancellable *cancel)
{
  GError *error = NULL;
  GPtrArray *layers = nw_load_file(data, &error);
  if (layers != NULL)
    g_task_return_pointer(task, layers, (GDestroyNotify)g_ptr_array_unref);
  else
    g_task_return_error(task, error);
}

static void demo_thread(GTask *task, gpointer src, gpointer data, GCancellable *cancel)
{
  GError *error = NULL;
  GPtrArray *layers = nw_load_demo(*(double *)data, &error);
  if (layers != NULL)
    g_task_return_pointer(task, layers, (GDestroyNotify)g_ptr_array_unref);
  else
    g_task_return_error(task, error);
}

void nw_load_file_async(const char *path, GCancellable *cancellable, GAsyncReadyCallback callback,
                        gpointer user_data)
{
  GTask *task = g_task_new(NULL, cancellable, callback, user_data);
  g_task_set_task_data(task, g_strdup(path), g_free);
  g_task_run_in_thread(task, file_thread);
  g_object_unref(task);
}

void nw_load_demo_async(double spacing_mm, GCancellable *cancellable, GAsyncReadyCallback callback,
                        gpointer user_data)
{
  GTask *task = g_task_new(NULL, cancellable, callback, user_data);
  double *s = g_new(double, 1);
  *s = spacing_mm;
  g_task_set_task_data(task, s, g_free);
  g_task_run_in_thread(task, demo_thread);
  g_object_unref(task);
}

GPtrArray *nw_load_finish(GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer(G_TASK(result), error);
}
