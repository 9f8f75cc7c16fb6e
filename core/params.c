/* params.c — per-method parameter tables: defaults, validation, parsing, formatting and
 * key-file (de)serialisation. See params.h. Any thread; no back end (pure C + GLib).
 *
 * Every value is a double. Integers, booleans and enum indices are validated to be whole
 * numbers in their range, so a value that went through nw_params_set can be cast to int. */
#include "params.h"

#include <math.h>
#include <string.h>

#include "nw_error.h"

NwParams *nw_params_new(const NwParamSpec *specs, int n)
{
  g_return_val_if_fail(n >= 0 && (specs != NULL || n == 0), NULL);
  NwParams *p = g_new0(NwParams, 1);
  p->specs = specs;
  p->n = n;
  p->values = g_new0(double, n > 0 ? n : 1);
  for (int i = 0; i < n; i++)
    p->values[i] = specs[i].def;
  return p;
}

NwParams *nw_params_copy(const NwParams *p)
{
  g_return_val_if_fail(p != NULL, NULL);
  NwParams *c = nw_params_new(p->specs, p->n);
  memcpy(c->values, p->values, (size_t)p->n * sizeof(double));
  return c;
}

void nw_params_free(NwParams *p)
{
  if (p == NULL)
    return;
  g_free(p->values);
  g_free(p);
}

int nw_params_find(const NwParams *p, const char *name)
{
  g_return_val_if_fail(p != NULL, -1);
  for (int i = 0; name != NULL && i < p->n; i++)
    if (strcmp(p->specs[i].name, name) == 0)
      return i;
  return -1;
}

double nw_params_get(const NwParams *p, const char *name)
{
  int i = nw_params_find(p, name);
  g_return_val_if_fail(i >= 0, 0.0);
  return p->values[i];
}

int nw_params_get_int(const NwParams *p, const char *name)
{
  return (int)lround(nw_params_get(p, name));
}

static int n_choices(const NwParamSpec *s)
{
  int n = 0;
  while (s->choices != NULL && s->choices[n] != NULL)
    n++;
  return n;
}

/* "a, b, c": the enum's choices for messages. */
static char *choices_text(const NwParamSpec *s)
{
  return s->choices != NULL ? g_strjoinv(", ", (char **)s->choices) : g_strdup("");
}

/* Locale-independent %g (a German desktop must not write "1,5" into a session file). */
static char *format_number(double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup(g_ascii_formatd(buf, sizeof buf, "%g", v));
}

/* The table's names, for "unknown parameter" messages. */
static char *names_text(const NwParams *p)
{
  GString *s = g_string_new(NULL);
  for (int i = 0; i < p->n; i++)
    g_string_append_printf(s, "%s%s", i > 0 ? ", " : "", p->specs[i].name);
  return g_string_free(s, FALSE);
}

static gboolean unknown_parameter(const NwParams *p, const char *name, GError **error)
{
  g_autofree char *known = names_text(p);
  g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "unknown parameter '%s' (known: %s)",
              name != NULL ? name : "", known);
  return FALSE;
}

/* The inclusive range a value of s must lie in; enums and booleans by construction. */
static void spec_range(const NwParamSpec *s, double *lo, double *hi)
{
  switch (s->type) {
  case NW_PARAM_BOOL:
    *lo = 0.0, *hi = 1.0;
    break;
  case NW_PARAM_ENUM:
    *lo = 0.0, *hi = (double)(n_choices(s) - 1);
    break;
  default:
    *lo = s->min, *hi = s->max;
  }
}

static gboolean validate(const NwParamSpec *s, double value, GError **error)
{
  g_autofree char *v = format_number(value);
  if (!isfinite(value)) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: %s is not a finite number", s->name, v);
    return FALSE;
  }
  if (s->type != NW_PARAM_DOUBLE && value != floor(value)) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: %s is not a whole number", s->name, v);
    return FALSE;
  }
  double lo, hi;
  spec_range(s, &lo, &hi);
  if (value >= lo && value <= hi)
    return TRUE;
  if (s->type == NW_PARAM_ENUM) {
    g_autofree char *c = choices_text(s);
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: %s is not a choice index 0..%g (%s)",
                s->name, v, hi, c);
  } else if (s->type == NW_PARAM_BOOL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: %s is not a boolean (0 or 1)", s->name, v);
  } else {
    g_autofree char *a = format_number(lo), *b = format_number(hi);
    gboolean unit = s->unit != NULL && s->unit[0] != '\0';
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: %s is outside %s..%s%s%s", s->name, v, a, b,
                unit ? " " : "", unit ? s->unit : "");
  }
  return FALSE;
}

gboolean nw_params_set(NwParams *p, const char *name, double value, GError **error)
{
  int i = nw_params_find(p, name);
  if (i < 0)
    return unknown_parameter(p, name, error);
  if (!validate(&p->specs[i], value, error))
    return FALSE;
  p->values[i] = value;
  return TRUE;
}

/* The whole of text as a number (C locale), or FALSE. */
static gboolean parse_number(const char *text, double *out)
{
  char *end = NULL;
  g_autofree char *t = g_strstrip(g_strdup(text));
  if (t[0] == '\0')
    return FALSE;
  *out = g_ascii_strtod(t, &end);
  return end != NULL && *end == '\0';
}

static gboolean parse_bool(const char *text, double *out)
{
  static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no", "off",
                                                                              "0"};
  for (gsize i = 0; i < G_N_ELEMENTS(yes); i++) {
    if (g_ascii_strcasecmp(text, yes[i]) == 0)
      return *out = 1.0, TRUE;
    if (g_ascii_strcasecmp(text, no[i]) == 0)
      return *out = 0.0, TRUE;
  }
  return FALSE;
}

/* text -> value for spec s, with a message naming the parameter and the text. */
static gboolean parse_value(const NwParamSpec *s, const char *text, double *out, GError **error)
{
  g_autofree char *t = g_strstrip(g_strdup(text));
  if (s->type == NW_PARAM_BOOL) {
    if (parse_bool(t, out))
      return TRUE;
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "%s: '%s' is not a boolean (true, false, yes, no, on, off, 1, 0)", s->name, t);
    return FALSE;
  }
  if (s->type == NW_PARAM_ENUM) {
    for (int c = 0; c < n_choices(s); c++)
      if (g_ascii_strcasecmp(t, s->choices[c]) == 0)
        return *out = (double)c, TRUE;
    g_autofree char *c = choices_text(s);
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: '%s' is not one of %s", s->name, t, c);
    return FALSE;
  }
  if (parse_number(t, out))
    return TRUE;
  g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: '%s' is not a number", s->name, t);
  return FALSE;
}

gboolean nw_params_set_string(NwParams *p, const char *name, const char *text, GError **error)
{
  g_return_val_if_fail(p != NULL && text != NULL, FALSE);
  g_autofree char *key = NULL;
  if (name == NULL) {
    const char *eq = strchr(text, '=');
    if (eq == NULL) {
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "'%s' is not of the form name=value", text);
      return FALSE;
    }
    key = g_strstrip(g_strndup(text, (gsize)(eq - text)));
    name = key;
    text = eq + 1;
  }
  int i = nw_params_find(p, name);
  if (i < 0)
    return unknown_parameter(p, name, error);
  double value;
  if (!parse_value(&p->specs[i], text, &value, error))
    return FALSE;
  return nw_params_set(p, name, value, error);
}

char *nw_params_format(const NwParams *p, int index)
{
  g_return_val_if_fail(p != NULL && index >= 0 && index < p->n, NULL);
  const NwParamSpec *s = &p->specs[index];
  double v = p->values[index];
  switch (s->type) {
  case NW_PARAM_BOOL:
    return g_strdup(v != 0.0 ? "true" : "false");
  case NW_PARAM_ENUM: {
    int c = (int)lround(v);
    if (c >= 0 && c < n_choices(s))
      return g_strdup(s->choices[c]);
    return format_number(v); /* not reachable through nw_params_set */
  }
  case NW_PARAM_INT:
    return g_strdup_printf("%ld", lround(v));
  default:
    return format_number(v);
  }
}

const char *nw_params_first_non_live_change(const NwParams *old, const NwParams *new_p)
{
  g_return_val_if_fail(old != NULL && new_p != NULL, NULL);
  g_return_val_if_fail(old->specs == new_p->specs && old->n == new_p->n, NULL);
  for (int i = 0; i < old->n; i++)
    if (!old->specs[i].live && old->values[i] != new_p->values[i])
      return old->specs[i].name;
  return NULL;
}

void nw_params_to_key_file(const NwParams *p, GKeyFile *kf, const char *group)
{
  g_return_if_fail(p != NULL && kf != NULL && group != NULL);
  for (int i = 0; i < p->n; i++) {
    const NwParamSpec *s = &p->specs[i];
    g_autofree char *text = nw_params_format(p, i);
    g_key_file_set_value(kf, group, s->name, text);
    if (s->tooltip != NULL)
      g_key_file_set_comment(kf, group, s->name, s->tooltip, NULL);
  }
}

/* Every key of group that the table does not know, as "a, b", or NULL when all are known. */
static char *unknown_keys(const NwParams *p, char **keys)
{
  GString *s = NULL;
  for (int k = 0; keys[k] != NULL; k++) {
    if (nw_params_find(p, keys[k]) >= 0)
      continue;
    if (s == NULL)
      s = g_string_new(NULL);
    g_string_append_printf(s, "%s%s", s->len > 0 ? ", " : "", keys[k]);
  }
  return s != NULL ? g_string_free(s, FALSE) : NULL;
}

gboolean nw_params_from_key_file(NwParams *p, GKeyFile *kf, const char *group, GError **error)
{
  g_return_val_if_fail(p != NULL && kf != NULL && group != NULL, FALSE);
  if (!g_key_file_has_group(kf, group))
    return TRUE; /* every key missing: all values stay */
  g_auto(GStrv) keys = g_key_file_get_keys(kf, group, NULL, NULL);
  if (keys == NULL)
    return TRUE;
  g_autofree char *unknown = unknown_keys(p, keys);
  if (unknown != NULL) {
    g_autofree char *known = names_text(p);
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "[%s]: unknown parameter(s) %s (known: %s)",
                group, unknown, known);
    return FALSE;
  }
  /* Parse into a copy so that a bad value leaves p untouched. */
  g_autoptr(NwParams) next = nw_params_copy(p);
  for (int k = 0; keys[k] != NULL; k++) {
    g_autoptr(GError) kf_error = NULL;
    g_autofree char *text = g_key_file_get_string(kf, group, keys[k], &kf_error);
    if (text == NULL) {
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "[%s]: %s: %s", group, keys[k],
                  kf_error->message);
      return FALSE;
    }
    if (!nw_params_set_string(next, keys[k], text, error)) {
      g_prefix_error(error, "[%s]: ", group);
      return FALSE;
    }
  }
  memcpy(p->values, next->values, (size_t)p->n * sizeof(double));
  return TRUE;
}
