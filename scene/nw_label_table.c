/* nw_label_table.c — label names and colours from MRIcron, FreeSurfer and ITK-SNAP files
 * (see nw_label_table.h). Any thread. */
#include "nw_label_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nw_error.h"

typedef struct {
  char *name;       /* NULL: none */
  gboolean colored; /* rgba holds a colour */
  guint8 rgba[4];
} Entry;

struct NwLabelTable {
  gint ref;
  GHashTable *entries; /* GINT index -> Entry* */
  GString *sources;
  int max_index;
};

static void entry_free(gpointer p)
{
  Entry *e = p;
  g_free(e->name);
  g_free(e);
}

NwLabelTable *nw_label_table_new(void)
{
  NwLabelTable *t = g_new0(NwLabelTable, 1);
  t->ref = 1;
  t->entries = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, entry_free);
  t->sources = g_string_new(NULL);
  t->max_index = -1;
  return t;
}

NwLabelTable *nw_label_table_ref(NwLabelTable *t)
{
  g_atomic_int_inc(&t->ref);
  return t;
}

void nw_label_table_unref(NwLabelTable *t)
{
  if (t == NULL || !g_atomic_int_dec_and_test(&t->ref))
    return;
  g_hash_table_destroy(t->entries);
  g_string_free(t->sources, TRUE);
  g_free(t);
}

static Entry *entry(NwLabelTable *t, int index)
{
  Entry *e = g_hash_table_lookup(t->entries, GINT_TO_POINTER(index));
  if (e == NULL) {
    e = g_new0(Entry, 1);
    g_hash_table_insert(t->entries, GINT_TO_POINTER(index), e);
    t->max_index = MAX(t->max_index, index);
  }
  return e;
}

static void set_name(NwLabelTable *t, int index, const char *name)
{
  Entry *e = entry(t, index);
  g_free(e->name);
  e->name = g_strdup(name);
}

static void set_color(NwLabelTable *t, int index, int r, int g, int b, int a)
{
  Entry *e = entry(t, index);
  const int c[4] = {r, g, b, a};
  for (int k = 0; k < 4; k++)
    e->rgba[k] = (guint8)CLAMP(c[k], 0, 255);
  e->colored = TRUE;
}

/* An integer token, whole. */
static gboolean parse_int(const char *s, int *out)
{
  char *end = NULL;
  const long v = strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < 0 || v > 65535)
    return FALSE;
  *out = (int)v;
  return TRUE;
}

/* ITK-SNAP: IDX R G B A VIS MSH "NAME" (A 0..1, VIS 0: hidden). */
static gboolean parse_itksnap(NwLabelTable *t, const char *line)
{
  const char *q = strchr(line, '"'), *q2 = q != NULL ? strrchr(line, '"') : NULL;
  if (q == NULL || q2 == q)
    return FALSE;
  int idx, r, g, b, vis, msh;
  double a;
  g_autofree char *nums = g_strndup(line, (gsize)(q - line));
  if (sscanf(nums, "%d %d %d %d %lf %d %d", &idx, &r, &g, &b, &a, &vis, &msh) != 7 || idx < 0 ||
      idx > 65535)
    return FALSE;
  g_autofree char *name = g_strndup(q + 1, (gsize)(q2 - q - 1));
  set_name(t, idx, name);
  set_color(t, idx, r, g, b, vis == 0 ? 0 : (int)(255.0 * CLAMP(a, 0.0, 1.0) + 0.5));
  return TRUE;
}

/* FreeSurfer "INDEX NAME R G B A" (A is 0 for opaque in FreeSurfer's files) or MRIcron
 * "INDEX NAME [CODE]". */
static gboolean parse_columns(NwLabelTable *t, char **tok, int n)
{
  int idx, c[4];
  if (n < 2 || !parse_int(tok[0], &idx))
    return FALSE;
  gboolean fs = n >= 6;
  for (int k = 0; k < 4 && fs; k++)
    fs = parse_int(tok[2 + k], &c[k]) && c[k] <= 255;
  set_name(t, idx, tok[1]);
  if (fs)
    set_color(t, idx, c[0], c[1], c[2], 255 - c[3]);
  return TRUE;
}

static gboolean load_text(NwLabelTable *t, const char *path, const char *text, GError **error)
{
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  int n_read = 0;
  for (int i = 0; lines[i] != NULL; i++) {
    char *line = g_strstrip(lines[i]);
    if (*line == '\0' || *line == '#')
      continue;
    g_auto(GStrv) raw = g_strsplit_set(line, " \t", -1);
    char *tok[8];
    int n = 0;
    for (int k = 0; raw[k] != NULL && n < 8; k++)
      if (raw[k][0] != '\0')
        tok[n++] = raw[k];
    if (strchr(line, '"') != NULL ? !parse_itksnap(t, line) : !parse_columns(t, tok, n)) {
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                  "%s: line %d is not a label (expected INDEX NAME ..., or ITK-SNAP's IDX R G B "
                  "A VIS MSH \"NAME\"): %s",
                  path, i + 1, line);
      return FALSE;
    }
    n_read++;
  }
  if (n_read == 0) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: no labels in it", path);
    return FALSE;
  }
  return TRUE;
}

gboolean nw_label_table_load(NwLabelTable *t, const char *path, GError **error)
{
  g_autofree char *data = NULL;
  gsize len = 0;
  g_autoptr(GError) io = NULL;
  if (!g_file_get_contents(path, &data, &len, &io)) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: %s", path, io->message);
    return FALSE;
  }
  gboolean ok;
  if (len == 768 && memchr(data, '\0', len) != NULL) {
    /* MRIcron .lut: 256 reds, 256 greens, 256 blues; index 0 is the background */
    const guint8 *p = (const guint8 *)data;
    for (int i = 1; i < 256; i++)
      set_color(t, i, p[i], p[256 + i], p[512 + i], 255);
    ok = TRUE;
  } else if (memchr(data, '\0', len) != NULL || !g_utf8_validate(data, (gssize)len, NULL)) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "%s: not a label table (neither text nor a 768-byte MRIcron .lut)", path);
    ok = FALSE;
  } else {
    ok = load_text(t, path, data, error);
  }
  if (ok)
    g_string_append_printf(t->sources, "%s%s", t->sources->len > 0 ? "; " : "", path);
  return ok;
}

const char *nw_label_table_sources(NwLabelTable *t)
{
  return t->sources->str;
}

const char *nw_label_table_name(NwLabelTable *t, int label)
{
  const Entry *e = g_hash_table_lookup(t->entries, GINT_TO_POINTER(label));
  return e != NULL ? e->name : NULL;
}

gboolean nw_label_table_color(NwLabelTable *t, int label, guint8 rgba[4])
{
  const Entry *e = g_hash_table_lookup(t->entries, GINT_TO_POINTER(label));
  if (e == NULL || !e->colored)
    return FALSE;
  memcpy(rgba, e->rgba, 4);
  return TRUE;
}

int nw_label_table_max_index(NwLabelTable *t)
{
  return t->max_index;
}

/* ---- tables beside images ---- */

/* "aal.nii.gz" -> "aal.nii" and "aal"; "aseg.mgz" -> "aseg". */
static void stems(const char *path, char **with_nii, char **bare)
{
  g_autofree char *p =
      g_str_has_suffix(path, ".gz") ? g_strndup(path, strlen(path) - 3) : g_strdup(path);
  *with_nii = g_strdup(p);
  const char *dot = strrchr(p, '.');
  const char *slash = strrchr(p, '/');
  *bare =
      dot != NULL && (slash == NULL || dot > slash) ? g_strndup(p, (gsize)(dot - p)) : g_strdup(p);
}

static gboolean try_load(NwLabelTable *t, const char *path)
{
  return g_file_test(path, G_FILE_TEST_IS_REGULAR) && nw_label_table_load(t, path, NULL);
}

NwLabelTable *nw_label_table_find_for(const char *image_path)
{
  g_autoptr(NwLabelTable) t = nw_label_table_new();
  g_autofree char *with_nii = NULL, *bare = NULL;
  stems(image_path, &with_nii, &bare);
  gboolean found = FALSE;
  static const char *const names[] = {".txt", ".label", ".lut"};
  for (int k = 0; k < 3; k++) { /* names first, then colours over them */
    g_autofree char *a = g_strconcat(with_nii, names[k], NULL);
    g_autofree char *b = g_strconcat(bare, names[k], NULL);
    found |= try_load(t, a) || (strcmp(a, b) != 0 && try_load(t, b));
  }
  if (!found) {
    g_autofree char *dir = g_path_get_dirname(image_path);
    g_autofree char *beside = g_build_filename(dir, "FreeSurferColorLUT.txt", NULL);
    const char *home = g_getenv("FREESURFER_HOME");
    g_autofree char *fs =
        home != NULL ? g_build_filename(home, "FreeSurferColorLUT.txt", NULL) : NULL;
    g_autofree char *base = g_path_get_basename(image_path);
    const gboolean fs_name = strstr(base, "aseg") != NULL || strstr(base, "aparc") != NULL ||
                             strstr(base, "wmparc") != NULL;
    found = try_load(t, beside) || (fs != NULL && fs_name && try_load(t, fs));
  }
  return found ? g_steal_pointer(&t) : NULL;
}
