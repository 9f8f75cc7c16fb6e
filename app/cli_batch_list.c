/* cli_batch_list.c — see cli_batch_list.h. Main thread. */
#include "cli_batch_list.h"

#include <string.h>

#include "input_file.h"
#include "nw_error.h"

/* Column names in NwBatchPath order; "id" is the extra one. */
static const char *const path_columns[NW_BATCH_N_PATHS] = {
    "fixed",        "moving",        "fixed_mask",       "moving_mask",
    "fixed_labels", "moving_labels", "initial_transform"};
#define ID_COLUMN NW_BATCH_N_PATHS

static void row_free(gpointer data)
{
  NwBatchRow *r = data;
  g_free(r->id);
  for (int i = 0; i < NW_BATCH_N_PATHS; i++)
    g_free(r->path[i]);
  g_free(r);
}

/* The fields of one line: comma-separated, trimmed, double quotes around a field keep its
 * commas ("" inside is one quote). NULL with a message on an unclosed quote. */
static GPtrArray *split_line(const char *line, const char **why)
{
  GPtrArray *fields = g_ptr_array_new_with_free_func(g_free);
  const char *p = line;
  for (;;) {
    GString *f = g_string_new(NULL);
    while (*p == ' ' || *p == '\t')
      p++;
    if (*p == '"') {
      for (p++;; p++) {
        if (*p == '\0') {
          *why = "a quote is not closed";
          g_string_free(f, TRUE);
          g_ptr_array_unref(fields);
          return NULL;
        }
        if (*p == '"' && p[1] == '"') {
          g_string_append_c(f, '"');
          p++;
        } else if (*p == '"') {
          p++;
          break;
        } else {
          g_string_append_c(f, *p);
        }
      }
      while (*p != '\0' && *p != ',') /* blanks after the closing quote */
        p++;
    } else {
      while (*p != '\0' && *p != ',')
        g_string_append_c(f, *p++);
    }
    g_ptr_array_add(fields, g_strstrip(g_string_free(f, FALSE)));
    if (*p != ',')
      return fields;
    p++;
  }
}

static gboolean id_ok(const char *id)
{
  if (id[0] == '\0' || id[0] == '.' || strlen(id) > 200)
    return FALSE;
  for (const char *c = id; *c != '\0'; c++)
    if (!g_ascii_isalnum(*c) && *c != '.' && *c != '_' && *c != '-')
      return FALSE;
  return TRUE;
}

/* column index of each header field (0..NW_BATCH_N_PATHS-1 paths, ID_COLUMN the id) */
static gboolean read_header(const char *csv, GPtrArray *names, int line, int *column,
                            GError **error)
{
  gboolean seen[NW_BATCH_N_PATHS + 1] = {FALSE};
  for (guint f = 0; f < names->len; f++) {
    const char *name = names->pdata[f];
    int c = strcmp(name, "id") == 0 ? ID_COLUMN : -1;
    for (int k = 0; k < NW_BATCH_N_PATHS && c < 0; k++)
      if (strcmp(name, path_columns[k]) == 0)
        c = k;
    if (c < 0 || seen[c]) {
      g_autofree char *known = g_strjoinv(", ", (char **)path_columns);
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: line %d: %s column '%s' (known: id, %s)",
                  csv, line, c < 0 ? "unknown" : "repeated", name, known);
      return FALSE;
    }
    seen[c] = TRUE;
    column[f] = c;
  }
  for (int k = NW_BATCH_FIXED; k <= NW_BATCH_MOVING; k++)
    if (!seen[k]) {
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                  "%s: line %d: no column '%s' (the header names the columns: fixed,moving,...)",
                  csv, line, path_columns[k]);
      return FALSE;
    }
  return TRUE;
}

/* One pair's fields into a row; paths resolved against folder. */
static NwBatchRow *read_row(const char *csv, const char *folder, GPtrArray *fields,
                            const int *column, int line, GError **error)
{
  NwBatchRow *r = g_new0(NwBatchRow, 1);
  r->line = line;
  for (guint f = 0; f < fields->len; f++) {
    const char *text = fields->pdata[f];
    if (column[f] == ID_COLUMN)
      r->id = text[0] != '\0' ? g_strdup(text) : NULL;
    else if (text[0] != '\0')
      r->path[column[f]] =
          g_path_is_absolute(text) ? g_strdup(text) : g_build_filename(folder, text, NULL);
  }
  if (r->id == NULL)
    r->id = g_strdup_printf("line%d", line);
  const char *missing = r->path[NW_BATCH_FIXED] == NULL    ? "fixed"
                        : r->path[NW_BATCH_MOVING] == NULL ? "moving"
                                                           : NULL;
  if (missing != NULL || !id_ok(r->id)) {
    if (missing != NULL)
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: line %d: the %s image is empty", csv,
                  line, missing);
    else
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                  "%s: line %d: id '%s' is not a folder name (letters, digits, '.', '_', '-'; "
                  "not starting with '.')",
                  csv, line, r->id);
    row_free(r);
    return NULL;
  }
  return r;
}

GPtrArray *nw_batch_list_read(const char *csv, GError **error)
{
  g_autofree char *text = NULL;
  if (!nw_input_file_check(csv, NULL, error) || !g_file_get_contents(csv, &text, NULL, error))
    return NULL;
  g_autofree char *folder = g_path_get_dirname(csv);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func(row_free);
  g_autoptr(GHashTable) ids = g_hash_table_new(g_str_hash, g_str_equal); /* id -> row */
  g_autofree int *column = NULL;
  guint n_columns = 0;
  for (int l = 0; lines[l] != NULL; l++) {
    char *line = g_strstrip(lines[l]); /* also a Windows line's \r */
    if (line[0] == '\0' || line[0] == '#')
      continue;
    const char *why = NULL;
    g_autoptr(GPtrArray) fields = split_line(line, &why);
    if (fields == NULL) {
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: line %d: %s", csv, l + 1, why);
      return NULL;
    }
    if (column == NULL) {
      n_columns = fields->len;
      column = g_new0(int, n_columns);
      if (!read_header(csv, fields, l + 1, column, error))
        return NULL;
      continue;
    }
    if (fields->len != n_columns) {
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: line %d: %u fields where the header has %u",
                  csv, l + 1, fields->len, n_columns);
      return NULL;
    }
    NwBatchRow *r = read_row(csv, folder, fields, column, l + 1, error);
    if (r == NULL)
      return NULL;
    const NwBatchRow *before = g_hash_table_lookup(ids, r->id);
    if (before != NULL) {
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: line %d: id '%s' repeats line %d", csv,
                  l + 1, r->id, before->line);
      row_free(r);
      return NULL;
    }
    g_ptr_array_add(rows, r);
    g_hash_table_insert(ids, r->id, r);
  }
  if (rows->len == 0) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "%s: no pairs (a header, then a line per pair)",
                csv);
    return NULL;
  }
  return g_steal_pointer(&rows);
}
