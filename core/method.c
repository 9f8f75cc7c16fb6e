/* method.c — method registry, device names, reports, frames and results. Registration
 * happens once at start-up on the main thread; lookups are read-only afterwards. */
#include "method.h"

#include <string.h>

#include "nw_error.h"

static GPtrArray *registry; /* const NwMethodOps* */
static const NwCudaProbe *cuda_probe;

const char *nw_device_name(NwDevice d)
{
  switch (d) {
  case NW_DEVICE_CPU:
    return "cpu";
  case NW_DEVICE_CUDA:
    return "cuda";
  default:
    return "auto";
  }
}

gboolean nw_device_parse(const char *text, NwDevice *out, GError **error)
{
  static const NwDevice all[] = {NW_DEVICE_AUTO, NW_DEVICE_CPU, NW_DEVICE_CUDA};
  for (gsize i = 0; i < G_N_ELEMENTS(all); i++)
    if (g_strcmp0(text, nw_device_name(all[i])) == 0) {
      *out = all[i];
      return TRUE;
    }
  g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "unknown device '%s': expected auto, cpu or cuda",
              text ? text : "");
  return FALSE;
}

void nw_report_single_level(NwIterationReport *r, int done, int iterations)
{
  r->iteration = done;
  r->level = 0;
  r->n_levels = 1;
  r->progress = iterations > 0 ? MIN(1.0, (double)done / iterations) : 0.0;
  r->finished = done >= iterations;
}

void nw_report_add(NwIterationReport *r, const char *name, double value)
{
  g_return_if_fail(r->n_figures < NW_MAX_FIGURES);
  r->figure_names[r->n_figures] = name;
  r->figures[r->n_figures] = value;
  r->n_figures++;
}

void nw_frame_clear(NwFrame *f)
{
  g_clear_pointer(&f->image, nw_volume_free);
  g_clear_pointer(&f->field, nw_volume_free);
  f->iteration = 0;
}

NwMethodResult *nw_method_result_new(void)
{
  NwMethodResult *r = g_new0(NwMethodResult, 1);
  r->names = g_ptr_array_new_with_free_func(g_free);
  r->volumes = g_ptr_array_new_with_free_func((GDestroyNotify)nw_volume_free);
  r->value_names = g_ptr_array_new_with_free_func(g_free);
  r->values = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
  return r;
}

void nw_method_result_add_values(NwMethodResult *r, const char *name, const double *v, int n)
{
  GArray *a = g_array_sized_new(FALSE, FALSE, sizeof(double), (guint)n);
  g_array_append_vals(a, v, (guint)n);
  g_ptr_array_add(r->value_names, g_strdup(name));
  g_ptr_array_add(r->values, a);
}

const double *nw_method_result_get_values(const NwMethodResult *r, const char *name, int *n)
{
  for (guint i = 0; i < r->value_names->len; i++)
    if (strcmp(g_ptr_array_index(r->value_names, i), name) == 0) {
      GArray *a = g_ptr_array_index(r->values, i);
      if (n != NULL)
        *n = (int)a->len;
      return (const double *)a->data;
    }
  return NULL;
}

void nw_method_result_add(NwMethodResult *r, const char *name, NwVolume *owned)
{
  g_ptr_array_add(r->names, g_strdup(name));
  g_ptr_array_add(r->volumes, owned);
}

void nw_method_result_replace(NwMethodResult *r, const char *name, NwVolume *owned)
{
  for (guint i = 0; i < r->names->len; i++)
    if (strcmp(g_ptr_array_index(r->names, i), name) == 0) {
      nw_volume_free(g_ptr_array_index(r->volumes, i));
      g_ptr_array_index(r->volumes, i) = owned;
      return;
    }
  nw_method_result_add(r, name, owned);
}

NwVolume *nw_method_result_take(NwMethodResult *r, const char *name)
{
  for (guint i = 0; i < r->names->len; i++)
    if (strcmp(g_ptr_array_index(r->names, i), name) == 0) {
      g_ptr_array_remove_index(r->names, i);
      return g_ptr_array_steal_index(r->volumes, i);
    }
  return NULL;
}

const NwVolume *nw_method_result_get(const NwMethodResult *r, const char *name)
{
  for (guint i = 0; i < r->names->len; i++)
    if (strcmp(g_ptr_array_index(r->names, i), name) == 0)
      return g_ptr_array_index(r->volumes, i);
  return NULL;
}

void nw_method_result_free(NwMethodResult *r)
{
  if (r == NULL)
    return;
  g_ptr_array_unref(r->names);
  g_ptr_array_unref(r->volumes);
  g_ptr_array_unref(r->value_names);
  g_ptr_array_unref(r->values);
  g_free(r);
}

void nw_method_register(const NwMethodOps *ops)
{
  if (registry == NULL)
    registry = g_ptr_array_new();
  for (guint i = 0; i < registry->len; i++) {
    const NwMethodOps *o = g_ptr_array_index(registry, i);
    if (strcmp(o->name, ops->name) == 0 && o->device == ops->device)
      return; /* registering twice is harmless (tests call the builtin registration often) */
  }
  g_ptr_array_add(registry, (gpointer)ops);
}

void nw_method_set_cuda_probe(const NwCudaProbe *probe)
{
  cuda_probe = probe;
}

void nw_method_cuda_bind_thread(void)
{
  if (cuda_probe != NULL && cuda_probe->bind_thread != NULL)
    cuda_probe->bind_thread();
}

gboolean nw_method_cuda_available(char *name, size_t name_len)
{
  if (cuda_probe == NULL || cuda_probe->available == NULL) {
    if (name != NULL && name_len > 0)
      g_strlcpy(name, "this build has no CUDA", name_len);
    return FALSE;
  }
  return cuda_probe->available(name, name_len);
}

gboolean nw_method_cuda_mem_info(size_t *free_bytes, size_t *total_bytes)
{
  if (cuda_probe == NULL || cuda_probe->mem_info == NULL)
    return FALSE;
  return cuda_probe->mem_info(free_bytes, total_bytes);
}

static const NwMethodOps *find(const char *name, NwDevice device)
{
  for (guint i = 0; registry != NULL && i < registry->len; i++) {
    const NwMethodOps *o = g_ptr_array_index(registry, i);
    if (strcmp(o->name, name) == 0 && o->device == device)
      return o;
  }
  return NULL;
}

const NwMethodOps *nw_method_lookup(const char *name, NwDevice device, GError **error)
{
  const NwMethodOps *cpu = find(name, NW_DEVICE_CPU), *cuda = find(name, NW_DEVICE_CUDA);
  if (cpu == NULL && cuda == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED, "unknown method '%s'", name);
    return NULL;
  }
  /* The probe initialises CUDA (driver, context: a fraction of a second on a GPU host), so
   * only a lookup that may pick CUDA asks it: a CPU lookup, e.g. nw_method_lookup_table's,
   * leaves CUDA untouched for a caller that initialises it on another thread meanwhile
   * (cli_common.h, nw_cli_method_start_device). */
  char why[256] = "";
  const gboolean have_device =
      device != NW_DEVICE_CPU && cuda != NULL && nw_method_cuda_available(why, sizeof why);
  switch (device) {
  case NW_DEVICE_CPU:
    if (cpu != NULL)
      return cpu;
    g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED, "method '%s' has no CPU implementation",
                name);
    return NULL;
  case NW_DEVICE_CUDA:
    if (cuda == NULL) {
      g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED,
                  "method '%s' has no CUDA implementation in this build", name);
      return NULL;
    }
    if (!have_device) {
      g_set_error(error, NW_ERROR, NW_ERROR_DEVICE, "--device cuda: no CUDA device (%s)", why);
      return NULL;
    }
    return cuda;
  default:
    if (cuda != NULL && have_device)
      return cuda;
    return cpu != NULL ? cpu : cuda;
  }
}

const NwMethodOps *nw_method_lookup_table(const char *name, GError **error)
{
  const NwMethodOps *ops = nw_method_lookup(name, NW_DEVICE_CPU, NULL);
  return ops != NULL ? ops : nw_method_lookup(name, NW_DEVICE_AUTO, error);
}

GPtrArray *nw_method_names(void)
{
  GPtrArray *names = g_ptr_array_new();
  for (guint i = 0; registry != NULL && i < registry->len; i++) {
    const NwMethodOps *o = g_ptr_array_index(registry, i);
    gboolean seen = FALSE;
    for (guint j = 0; j < names->len && !seen; j++)
      seen = strcmp(g_ptr_array_index(names, j), o->name) == 0;
    if (!seen)
      g_ptr_array_add(names, (gpointer)o->name);
  }
  return names;
}
