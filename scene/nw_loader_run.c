/* nw_loader_run.c — a run opened from its summary (PREFIX_summary.json, written by
 * neurowarp-cli): the fixed image and the warped result compared, the moving image and every
 * other output in the layer list but hidden (see nw_loader.h). Worker thread (GTask), like
 * every reader of the loader. */
#include <json-glib/json-glib.h>
#include <string.h>

#include "nw_error.h"
#include "nw_layer.h"
#include "nw_loader.h"
#include "nw_loader_private.h"

/* The file a summary names: as written (absolute, or relative to where the run was started,
 * when that is here), else beside the summary (a folder moved or copied whole). NULL when
 * neither exists. */
static char *resolve(const char *named, const char *dir)
{
  if (g_file_test(named, G_FILE_TEST_IS_REGULAR))
    return g_strdup(named);
  g_autofree char *base = g_path_get_basename(named);
  char *beside = g_build_filename(dir, base, NULL);
  if (g_file_test(beside, G_FILE_TEST_IS_REGULAR))
    return beside;
  g_free(beside);
  return NULL;
}

/* Load one named file's layers into out, shown or hidden. An output that cannot be found
 * or read is an error; a missing input (fixed, moving) is left out. */
static gboolean add_file(GPtrArray *out, const char *named, const char *dir, gboolean visible,
                         gboolean required, const char *summary, GError **error)
{
  g_autofree char *path = named != NULL ? resolve(named, dir) : NULL;
  if (path == NULL) {
    if (required)
      g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: the run's file %s is missing (looked in %s)",
                  summary, named, dir);
    return !required;
  }
  g_autoptr(GPtrArray) layers = nw_load_file(path, error);
  if (layers == NULL)
    return FALSE;
  for (guint i = 0; i < layers->len; i++) {
    NwLayer *l = g_ptr_array_index(layers, i);
    if (!visible)
      nw_layer_set_visible(l, FALSE);
    g_ptr_array_add(out, g_object_ref(l));
  }
  return TRUE;
}

static const char *member_string(JsonObject *o, const char *name)
{
  JsonNode *n = json_object_get_member(o, name);
  return n != NULL && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING
             ? json_node_get_string(n)
             : NULL;
}

GPtrArray *nw_load_run_summary(const char *path, GError **error)
{
  g_autoptr(JsonParser) parser = json_parser_new();
  g_autoptr(GError) json_error = NULL;
  if (!json_parser_load_from_file(parser, path, &json_error)) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: not a JSON file: %s", path,
                json_error->message);
    return NULL;
  }
  JsonNode *root = json_parser_get_root(parser);
  JsonObject *o = root != NULL && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
  JsonNode *outs = o != NULL ? json_object_get_member(o, "outputs") : NULL;
  if (outs == NULL || !JSON_NODE_HOLDS_ARRAY(outs)) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: not the summary of a neurowarp run (no \"outputs\" list)", path);
    return NULL;
  }
  JsonArray *a = json_node_get_array(outs);
  g_autofree char *dir = g_path_get_dirname(path);
  /* the compared pair first (the scene compares the first two images): fixed, warped */
  const char *warped = NULL;
  for (guint i = 0; i < json_array_get_length(a); i++) {
    const char *f = json_array_get_string_element(a, i);
    if (f != NULL && g_str_has_suffix(f, "_warped.nii.gz"))
      warped = f;
  }
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(g_object_unref);
  if (!add_file(out, member_string(o, "fixed"), dir, TRUE, FALSE, path, error) ||
      !add_file(out, warped, dir, TRUE, warped != NULL, path, error) ||
      !add_file(out, member_string(o, "moving"), dir, FALSE, FALSE, path, error))
    return NULL;
  for (guint i = 0; i < json_array_get_length(a); i++) {
    const char *f = json_array_get_string_element(a, i);
    if (f == NULL || f == warped || g_str_has_suffix(f, ".json"))
      continue;
    if (!add_file(out, f, dir, FALSE, TRUE, path, error))
      return NULL;
  }
  return g_steal_pointer(&out);
}
