/* cli_batch_table.c — what a batch pair's stages left on disk (complete or not, their
 * figures) and the batch summary table, DIR/batch_summary.csv and .json (cli_batch.h). Any
 * thread for the completeness check; the table on the main thread. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "atomic_file.h"
#include "cli_batch.h"
#include "json_out.h"

static const char *const time_names[5] = {"read", "device_init", "register", "write", "total"};

const char *nw_batch_status_name(NwBatchStatus s)
{
  switch (s) {
  case NW_BATCH_DONE:
    return "done";
  case NW_BATCH_SKIPPED:
    return "skipped-complete";
  case NW_BATCH_FAILED:
    return "failed";
  case NW_BATCH_CANCELLED:
    return "cancelled";
  default:
    return "not-run";
  }
}

void nw_batch_result_init(NwBatchResult *r)
{
  *r = (NwBatchResult){.status = NW_BATCH_PENDING, .metric_value = NAN, .mean_dice = NAN};
  for (int k = 0; k < 5; k++)
    r->time_s[k] = NAN;
}

void nw_batch_result_clear(NwBatchResult *r)
{
  g_clear_pointer(&r->error, g_free);
  g_clear_pointer(&r->metric, g_free);
}

char *nw_batch_prefix(const char *dir, const NwBatchRow *row, const NwBatchStage *stage)
{
  return g_build_filename(dir, row->id, stage->method, NULL);
}

/* The stage's summary as an object, or NULL (none, not JSON, not an object). */
static JsonParser *load_summary(const char *dir, const NwBatchRow *row, const NwBatchStage *stage,
                                JsonObject **object)
{
  g_autofree char *prefix = nw_batch_prefix(dir, row, stage);
  g_autofree char *path = g_strconcat(prefix, "_summary.json", NULL);
  JsonParser *parser = json_parser_new();
  JsonNode *root = NULL;
  if (!g_file_test(path, G_FILE_TEST_IS_REGULAR) ||
      !json_parser_load_from_file(parser, path, NULL) ||
      (root = json_parser_get_root(parser)) == NULL || !JSON_NODE_HOLDS_OBJECT(root)) {
    g_object_unref(parser);
    return NULL;
  }
  *object = json_node_get_object(root);
  return parser;
}

static gboolean member_is(JsonObject *o, const char *name, const char *text)
{
  JsonNode *n = json_object_get_member(o, name);
  return n != NULL && JSON_NODE_HOLDS_VALUE(n) &&
         json_node_get_value_type(n) == G_TYPE_STRING &&
         g_strcmp0(json_node_get_string(n), text) == 0;
}

gboolean nw_batch_stage_complete(const char *dir, const NwBatchRow *row, const NwBatchStage *stage,
                                 const char *fixed, const char *moving, JsonNode *params)
{
  JsonObject *o = NULL;
  g_autoptr(JsonParser) parser = load_summary(dir, row, stage, &o);
  if (parser == NULL || !member_is(o, "fixed", fixed) || !member_is(o, "moving", moving))
    return FALSE;
  JsonNode *p = json_object_get_member(o, "parameters");
  JsonNode *outputs = json_object_get_member(o, "outputs");
  if (p == NULL || !json_node_equal(p, params) || outputs == NULL ||
      !JSON_NODE_HOLDS_ARRAY(outputs))
    return FALSE; /* another run's parameters: not this batch's result */
  JsonArray *a = json_node_get_array(outputs);
  for (guint i = 0; i < json_array_get_length(a); i++) {
    const char *out = json_array_get_string_element(a, i);
    if (out == NULL || !g_file_test(out, G_FILE_TEST_IS_REGULAR))
      return FALSE;
  }
  return json_array_get_length(a) > 0;
}

static double number(JsonObject *o, const char *name)
{
  return o != NULL && json_object_has_member(o, name) ? json_object_get_double_member(o, name)
                                                      : NAN;
}

/* Times, iterations, metric and Dice of one stage's summary into r. */
static void add_stage(NwBatchResult *r, JsonObject *o, const NwBatchStage *stage)
{
  JsonNode *t = json_object_get_member(o, "time_s");
  JsonObject *times = t != NULL && JSON_NODE_HOLDS_OBJECT(t) ? json_node_get_object(t) : NULL;
  for (int k = 0; k < 5; k++) {
    const double v = number(times, time_names[k]);
    if (isfinite(v))
      r->time_s[k] = isfinite(r->time_s[k]) ? r->time_s[k] + v : v;
  }
  if (json_object_has_member(o, "iterations"))
    r->iterations += (int)json_object_get_int_member(o, "iterations");
  JsonNode *f = json_object_get_member(o, "final");
  JsonObject *final = f != NULL && JSON_NODE_HOLDS_OBJECT(f) ? json_node_get_object(f) : NULL;
  double v = NAN;
  g_autofree char *name = NULL;
  if (stage->metric != NULL) {
    v = number(final, stage->metric);
    name = g_strdup(stage->metric);
  } else {
    JsonNode *p = json_object_get_member(o, "parameters");
    JsonObject *params = p != NULL && JSON_NODE_HOLDS_OBJECT(p) ? json_node_get_object(p) : NULL;
    v = number(o, "metric_value");
    name = g_strdup(params != NULL && json_object_has_member(params, "metric")
                        ? json_object_get_string_member(params, "metric")
                        : "metric_value");
  }
  if (isfinite(v)) {
    g_free(r->metric);
    r->metric = g_steal_pointer(&name);
    r->metric_value = v;
  }
  const double dice = number(o, "mean_dice");
  if (isfinite(dice))
    r->mean_dice = dice;
}

void nw_batch_result_load(NwBatchResult *r, const char *dir, const NwBatchRow *row,
                          const NwBatchStage *stages, int n_stages)
{
  r->loaded = TRUE;
  for (int k = 0; k < 5; k++)
    r->time_s[k] = NAN;
  r->iterations = 0;
  g_clear_pointer(&r->metric, g_free);
  r->metric_value = r->mean_dice = NAN;
  for (int s = 0; s < n_stages; s++) {
    JsonObject *o = NULL;
    g_autoptr(JsonParser) parser = load_summary(dir, row, &stages[s], &o);
    if (parser != NULL)
      add_stage(r, o, &stages[s]);
  }
}

/* ---- the table ------------------------------------------------------------------------- */

static void csv_field(GString *s, const char *text)
{
  if (text == NULL)
    return;
  if (strpbrk(text, ",\"\n\r") == NULL) {
    g_string_append(s, text);
    return;
  }
  g_string_append_c(s, '"');
  for (const char *c = text; *c != '\0'; c++) {
    if (*c == '"')
      g_string_append_c(s, '"');
    g_string_append_c(s, *c == '\n' || *c == '\r' ? ' ' : *c);
  }
  g_string_append_c(s, '"');
}

static void csv_number(GString *s, double v, const char *format)
{
  if (isfinite(v))
    g_string_append_printf(s, format, v);
}

static char *table_csv(GPtrArray *rows, const NwBatchResult *results)
{
  GString *s = g_string_new("id,status,read_s,device_init_s,register_s,write_s,total_s,"
                            "iterations,metric,metric_value,mean_dice,error\n");
  for (guint i = 0; i < rows->len; i++) {
    const NwBatchRow *row = rows->pdata[i];
    const NwBatchResult *r = &results[i];
    csv_field(s, row->id);
    g_string_append_printf(s, ",%s", nw_batch_status_name(r->status));
    for (int k = 0; k < 5; k++) {
      g_string_append_c(s, ',');
      csv_number(s, r->time_s[k], "%.3f");
    }
    g_string_append_c(s, ',');
    if (r->loaded)
      g_string_append_printf(s, "%d", r->iterations);
    g_string_append_c(s, ',');
    csv_field(s, r->metric);
    g_string_append_c(s, ',');
    csv_number(s, r->metric_value, "%.6g");
    g_string_append_c(s, ',');
    csv_number(s, r->mean_dice, "%.4f");
    g_string_append_c(s, ',');
    csv_field(s, r->error);
    g_string_append_c(s, '\n');
  }
  return g_string_free(s, FALSE);
}

static void row_object(JsonBuilder *b, const NwBatchRow *row, const NwBatchResult *r)
{
  nw_json_member_string(b, "id", row->id);
  nw_json_member_string(b, "status", nw_batch_status_name(r->status));
  nw_json_member_string(b, "fixed", row->path[NW_BATCH_FIXED]);
  nw_json_member_string(b, "moving", row->path[NW_BATCH_MOVING]);
  json_builder_set_member_name(b, "time_s");
  json_builder_begin_object(b);
  for (int k = 0; k < 5; k++)
    nw_json_member_number(b, time_names[k], r->time_s[k]);
  json_builder_end_object(b);
  nw_json_member_number(b, "wall_s", r->wall_s);
  nw_json_member_number(b, "iterations", r->loaded ? r->iterations : NAN);
  json_builder_set_member_name(b, "metric");
  if (r->metric != NULL)
    nw_json_add_string(b, r->metric);
  else
    json_builder_add_null_value(b);
  nw_json_member_number(b, "metric_value", r->metric_value);
  nw_json_member_number(b, "mean_dice", r->mean_dice);
  json_builder_set_member_name(b, "error");
  if (r->error != NULL)
    nw_json_add_string(b, r->error);
  else
    json_builder_add_null_value(b);
}

/* Counts per status, the time spent registering and pairs per minute of this run. */
static void totals_object(JsonBuilder *b, const NwBatchInfo *info, const NwBatchResult *results,
                          guint n)
{
  int count[NW_BATCH_CANCELLED + 1] = {0};
  double reg = 0.0;
  for (guint i = 0; i < n; i++) {
    count[results[i].status]++;
    if (results[i].status == NW_BATCH_DONE && isfinite(results[i].time_s[2]))
      reg += results[i].time_s[2];
  }
  nw_json_member_number(b, "pairs", n);
  nw_json_member_number(b, "done", count[NW_BATCH_DONE]);
  nw_json_member_number(b, "skipped_complete", count[NW_BATCH_SKIPPED]);
  nw_json_member_number(b, "failed", count[NW_BATCH_FAILED]);
  nw_json_member_number(b, "cancelled", count[NW_BATCH_CANCELLED]);
  nw_json_member_number(b, "not_run", count[NW_BATCH_PENDING]);
  nw_json_member_number(b, "wall_s", info->wall_s);
  nw_json_member_number(b, "register_s", reg);
  /* Pairs this run registered per minute of its wall time: the throughput of the set-up
   * (jobs, ranks, device); skipped pairs do not count. */
  nw_json_member_number(b, "pairs_per_minute",
                        info->wall_s > 0.0 ? count[NW_BATCH_DONE] * 60.0 / info->wall_s : 0.0);
}

static char *table_json(const NwBatchInfo *info, GPtrArray *rows, const NwBatchResult *results)
{
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  nw_json_member_string(b, "command", "batch");
  nw_json_member_string(b, "list", info->list);
  nw_json_member_string(b, "out", info->dir);
  nw_json_member_string(b, "method", info->method);
  nw_json_member_string(b, "device", info->device);
  nw_json_member_number(b, "jobs", info->jobs);
  nw_json_member_number(b, "ranks", info->ranks);
  json_builder_set_member_name(b, "pairs");
  json_builder_begin_array(b);
  for (guint i = 0; i < rows->len; i++) {
    json_builder_begin_object(b);
    row_object(b, rows->pdata[i], &results[i]);
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
  json_builder_set_member_name(b, "totals");
  json_builder_begin_object(b);
  totals_object(b, info, results, rows->len);
  json_builder_end_object(b);
  json_builder_end_object(b);
  g_autofree char *text = nw_json_to_string(b, TRUE);
  return g_strconcat(text, "\n", NULL);
}

gboolean nw_batch_table_write(const NwBatchInfo *info, GPtrArray *rows,
                              const NwBatchResult *results, GError **error)
{
  g_autofree char *csv_path = g_build_filename(info->dir, "batch_summary.csv", NULL);
  g_autofree char *json_path = g_build_filename(info->dir, "batch_summary.json", NULL);
  g_autofree char *csv = table_csv(rows, results);
  g_autofree char *json = table_json(info, rows, results);
  return nw_write_file_atomically(csv_path, csv, -1, error) &&
         nw_write_file_atomically(json_path, json, -1, error);
}

char *nw_batch_row_json_line(const NwBatchRow *row, const NwBatchResult *r)
{
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "pair");
  json_builder_add_boolean_value(b, TRUE);
  row_object(b, row, r);
  json_builder_end_object(b);
  return nw_json_to_string(b, FALSE);
}

char *nw_batch_totals_json_line(const NwBatchInfo *info, const NwBatchResult *results, guint n)
{
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "summary");
  json_builder_add_boolean_value(b, TRUE);
  nw_json_member_string(b, "command", "batch");
  nw_json_member_string(b, "method", info->method);
  totals_object(b, info, results, n);
  json_builder_end_object(b);
  return nw_json_to_string(b, FALSE);
}
