/* nw_session.c — session files and parameter presets (GKeyFile text; format in
 * nw_session.h). Reading validates everything: the version, the method name against the
 * registry, the device names, every key of [session] and every parameter (through the
 * method's table, params.h), so a hand-edited file fails with a message naming the file,
 * the key and the value. Any thread; no GTK, no GPU. */
#include "nw_session.h"

#include <string.h>

#include "atomic_file.h"
#include "nw_error.h"

#define SESSION_GROUP "session"
#define SESSION_VERSION 1

static const char *const session_keys[] = {"version", "method",     "device",   "fixed", "moving",
                                           "demo",    "second-job", "device-2", NULL};

void nw_session_clear(NwSession *s)
{
  g_return_if_fail(s != NULL);
  g_clear_pointer(&s->method, g_free);
  g_clear_pointer(&s->fixed_path, g_free);
  g_clear_pointer(&s->moving_path, g_free);
  g_clear_pointer(&s->params, nw_params_free);
  g_clear_pointer(&s->params2, nw_params_free);
  memset(s, 0, sizeof *s);
}

gboolean nw_session_save(const NwSession *s, const char *path, GError **error)
{
  g_return_val_if_fail(s != NULL && s->method != NULL && s->params != NULL, FALSE);
  g_autoptr(GKeyFile) kf = g_key_file_new();
  g_key_file_set_integer(kf, SESSION_GROUP, "version", SESSION_VERSION);
  g_key_file_set_string(kf, SESSION_GROUP, "method", s->method);
  g_key_file_set_string(kf, SESSION_GROUP, "device", nw_device_name(s->device));
  if (s->fixed_path != NULL)
    g_key_file_set_string(kf, SESSION_GROUP, "fixed", s->fixed_path);
  if (s->moving_path != NULL)
    g_key_file_set_string(kf, SESSION_GROUP, "moving", s->moving_path);
  g_key_file_set_boolean(kf, SESSION_GROUP, "demo", s->demo);
  gboolean second = s->second_job && s->params2 != NULL;
  g_key_file_set_boolean(kf, SESSION_GROUP, "second-job", second);
  g_key_file_set_string(kf, SESSION_GROUP, "device-2", nw_device_name(s->device2));
  nw_params_to_key_file(s->params, kf, s->method);
  if (second) {
    g_autofree char *group2 = g_strdup_printf("%s@2", s->method);
    nw_params_to_key_file(s->params2, kf, group2);
  }
  gsize len = 0;
  g_autofree char *text = g_key_file_to_data(kf, &len, NULL);
  return nw_write_file_atomically(path, text, (gssize)len, error);
}

/* Unknown keys in [session] are errors, like unknown parameters. */
static gboolean check_session_keys(GKeyFile *kf, const char *path, GError **error)
{
  g_auto(GStrv) keys = g_key_file_get_keys(kf, SESSION_GROUP, NULL, NULL);
  for (int k = 0; keys != NULL && keys[k] != NULL; k++) {
    if (!g_strv_contains(session_keys, keys[k])) {
      g_autofree char *value = g_key_file_get_value(kf, SESSION_GROUP, keys[k], NULL);
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: [session] unknown key %s=%s", path,
                  keys[k], value != NULL ? value : "");
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean read_version(GKeyFile *kf, const char *path, GError **error)
{
  g_autofree char *text = g_key_file_get_value(kf, SESSION_GROUP, "version", NULL);
  if (text == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: [session] version is missing", path);
    return FALSE;
  }
  if (g_strcmp0(g_strstrip(text), "1") != 0) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: [session] version=%s is not supported (this build reads version %d)", path,
                text, SESSION_VERSION);
    return FALSE;
  }
  return TRUE;
}

/* Optional boolean key; missing means FALSE. */
static gboolean read_bool(GKeyFile *kf, const char *path, const char *key, gboolean *out,
                          GError **error)
{
  *out = FALSE;
  g_autofree char *text = g_key_file_get_value(kf, SESSION_GROUP, key, NULL);
  if (text == NULL)
    return TRUE;
  g_autoptr(GError) kf_error = NULL;
  *out = g_key_file_get_boolean(kf, SESSION_GROUP, key, &kf_error);
  if (kf_error != NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: [session] %s=%s is not true or false", path,
                key, text);
    return FALSE;
  }
  return TRUE;
}

/* Optional device key; missing means auto. */
static gboolean read_device(GKeyFile *kf, const char *path, const char *key, NwDevice *out,
                            GError **error)
{
  *out = NW_DEVICE_AUTO;
  g_autofree char *text = g_key_file_get_string(kf, SESSION_GROUP, key, NULL);
  if (text == NULL)
    return TRUE;
  if (!nw_device_parse(text, out, error)) {
    g_prefix_error(error, "%s: [session] %s=%s: ", path, key, text);
    return FALSE;
  }
  return TRUE;
}

/* The method's parameter table from the registry, whatever the device. */
static const NwMethodOps *lookup_method(const char *name, const char *path, GError **error)
{
  const NwMethodOps *ops = nw_method_lookup_table(name, error);
  if (ops == NULL)
    g_prefix_error(error, "%s: [session] method=%s: ", path, name);
  return ops;
}

/* Only [session], [METHOD] and [METHOD@2] may appear. */
static gboolean check_groups(GKeyFile *kf, const char *path, const char *method, GError **error)
{
  g_autofree char *group2 = g_strdup_printf("%s@2", method);
  g_auto(GStrv) groups = g_key_file_get_groups(kf, NULL);
  for (int g = 0; groups[g] != NULL; g++) {
    if (strcmp(groups[g], SESSION_GROUP) != 0 && strcmp(groups[g], method) != 0 &&
        strcmp(groups[g], group2) != 0) {
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                  "%s: unknown group [%s] (expected [session], [%s], [%s])", path, groups[g],
                  method, group2);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean read_params(GKeyFile *kf, const char *path, const NwMethodOps *ops,
                            const char *group, NwParams **out, GError **error)
{
  g_autoptr(NwParams) p = nw_params_new(ops->params, ops->n_params);
  if (!nw_params_from_key_file(p, kf, group, error)) {
    nw_error_prefix(error, path);
    return FALSE;
  }
  *out = g_steal_pointer(&p);
  return TRUE;
}

static gboolean load_session(NwSession *s, GKeyFile *kf, const char *path, GError **error)
{
  if (!g_key_file_has_group(kf, SESSION_GROUP)) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: no [session] group", path);
    return FALSE;
  }
  if (!check_session_keys(kf, path, error) || !read_version(kf, path, error))
    return FALSE;
  s->method = g_key_file_get_string(kf, SESSION_GROUP, "method", NULL);
  if (s->method == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: [session] method is missing", path);
    return FALSE;
  }
  const NwMethodOps *ops = lookup_method(s->method, path, error);
  if (ops == NULL || !check_groups(kf, path, s->method, error))
    return FALSE;
  if (!read_device(kf, path, "device", &s->device, error) ||
      !read_device(kf, path, "device-2", &s->device2, error) ||
      !read_bool(kf, path, "demo", &s->demo, error) ||
      !read_bool(kf, path, "second-job", &s->second_job, error))
    return FALSE;
  s->fixed_path = g_key_file_get_string(kf, SESSION_GROUP, "fixed", NULL);
  s->moving_path = g_key_file_get_string(kf, SESSION_GROUP, "moving", NULL);
  if (!read_params(kf, path, ops, s->method, &s->params, error))
    return FALSE;
  if (s->second_job) {
    g_autofree char *group2 = g_strdup_printf("%s@2", s->method);
    if (!read_params(kf, path, ops, group2, &s->params2, error))
      return FALSE;
  }
  return TRUE;
}

gboolean nw_session_load(NwSession *s, const char *path, GError **error)
{
  g_return_val_if_fail(s != NULL && path != NULL, FALSE);
  nw_session_clear(s);
  g_autoptr(GKeyFile) kf = g_key_file_new();
  g_autoptr(GError) kf_error = NULL;
  if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &kf_error)) {
    gboolean io = kf_error->domain == G_FILE_ERROR;
    g_set_error(error, NW_ERROR, io ? NW_ERROR_IO : NW_ERROR_FORMAT, "%s: %s", path,
                kf_error->message);
    return FALSE;
  }
  if (!load_session(s, kf, path, error)) {
    nw_session_clear(s);
    return FALSE;
  }
  return TRUE;
}

gboolean nw_preset_apply(NwParams *p, const char *method, const char *path, GError **error)
{
  g_return_val_if_fail(p != NULL && method != NULL && path != NULL, FALSE);
  g_autoptr(GKeyFile) kf = g_key_file_new();
  g_autoptr(GError) kf_error = NULL;
  if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &kf_error)) {
    gboolean io = kf_error->domain == G_FILE_ERROR;
    g_set_error(error, NW_ERROR, io ? NW_ERROR_IO : NW_ERROR_FORMAT, "%s: %s", path,
                kf_error->message);
    return FALSE;
  }
  gsize n_groups = 0;
  g_auto(GStrv) groups = g_key_file_get_groups(kf, &n_groups);
  const char *group = method;
  if (!g_key_file_has_group(kf, method)) {
    if (n_groups != 1) {
      g_autofree char *names = g_strjoinv(", ", groups);
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: no group [%s] (groups: %s)", path, method,
                  n_groups > 0 ? names : "none");
      return FALSE;
    }
    group = groups[0];
  }
  if (!nw_params_from_key_file(p, kf, group, error)) {
    nw_error_prefix(error, path);
    return FALSE;
  }
  return TRUE;
}

/* "demons-brain-mri.ini" for "demons" -> "brain MRI". */
static char *preset_display_name(const char *file, const char *method)
{
  static const char *const acronyms[] = {"mri", "ct", "pet", "dti", "fmri", "mr", NULL};
  size_t skip = strlen(method) + 1;
  g_autofree char *stem = g_strndup(file + skip, strlen(file) - skip - strlen(".ini"));
  g_auto(GStrv) words = g_strsplit(stem, "-", -1);
  for (int w = 0; words[w] != NULL; w++) {
    if (g_strv_contains(acronyms, words[w])) {
      char *up = g_ascii_strup(words[w], -1);
      g_free(words[w]);
      words[w] = up;
    }
  }
  return g_strjoinv(" ", words);
}

static int compare_strings(gconstpointer a, gconstpointer b)
{
  return g_strcmp0(*(const char *const *)a, *(const char *const *)b);
}

const char *nw_presets_dir(void)
{
#ifdef NW_PRESETS_INSTALL_DIR
  if (g_file_test(NW_PRESETS_INSTALL_DIR, G_FILE_TEST_IS_DIR))
    return NW_PRESETS_INSTALL_DIR;
#endif
#ifdef NW_PRESETS_DIR
  return NW_PRESETS_DIR;
#else
  return NULL;
#endif
}

void nw_presets_list(const char *method, GPtrArray **names, GPtrArray **paths)
{
  g_return_if_fail(method != NULL && names != NULL && paths != NULL);
  *names = g_ptr_array_new_with_free_func(g_free);
  *paths = g_ptr_array_new_with_free_func(g_free);
  const char *dir_path = nw_presets_dir();
  g_autoptr(GDir) dir = dir_path != NULL ? g_dir_open(dir_path, 0, NULL) : NULL;
  if (dir == NULL)
    return;
  g_autofree char *prefix = g_strdup_printf("%s-", method);
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func(g_free);
  const char *file;
  while ((file = g_dir_read_name(dir)) != NULL) {
    if (g_str_has_prefix(file, prefix) && g_str_has_suffix(file, ".ini") &&
        strlen(file) > strlen(prefix) + strlen(".ini"))
      g_ptr_array_add(files, g_strdup(file));
  }
  g_ptr_array_sort(files, compare_strings);
  for (guint i = 0; i < files->len; i++) {
    const char *f = g_ptr_array_index(files, i);
    g_ptr_array_add(*names, preset_display_name(f, method));
    g_ptr_array_add(*paths, g_build_filename(dir_path, f, NULL));
  }
}
