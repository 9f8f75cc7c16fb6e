/* cli_common.c — see cli_common.h. Main thread, except the job callbacks (worker thread),
 * which only print. Back end: whichever the method registry picks. */
#include "cli_common.h"

#include <glib-unix.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "input_file.h"
#include "job.h"
#include "json_out.h"
#include "nw_error.h"

/* ---- messages and option parsing ------------------------------------------------------ */

static void print_one_line(const char *prefix, const char *message)
{
  g_autofree char *line = g_strdup(message != NULL ? message : "unknown error");
  g_strdelimit(line, "\r\n", ' ');
  fprintf(stderr, "%s: %s\n", prefix, line);
  fflush(stderr);
}

int nw_cli_fail(const GError *error)
{
  g_autofree char *hint = error != NULL && g_error_matches(error, NW_ERROR, NW_ERROR_EXISTS)
                              ? g_strdup_printf("%s (--overwrite replaces it)", error->message)
                              : NULL;
  print_one_line(NW_CLI_PROG, hint != NULL ? hint : error != NULL ? error->message : NULL);
  if (error != NULL && error->domain == NW_ERROR && error->code == NW_ERROR_CANCELLED)
    return NW_CLI_EXIT_CANCELLED;
  return NW_CLI_EXIT_FAILURE;
}

int nw_cli_usage(const char *command, const char *message)
{
  g_autofree char *prefix =
      command != NULL ? g_strdup_printf("%s %s", NW_CLI_PROG, command) : g_strdup(NW_CLI_PROG);
  print_one_line(prefix, message);
  fprintf(stderr, "Try '%s --help'.\n", prefix);
  return NW_CLI_EXIT_USAGE;
}

GOptionContext *nw_cli_context_new(const char *params_string, const char *summary,
                                   const char *description)
{
  GOptionContext *ctx = g_option_context_new(params_string);
  g_option_context_set_summary(ctx, summary);
  g_option_context_set_description(ctx, description);
  g_option_context_set_help_enabled(ctx, TRUE);
  return ctx;
}

gboolean nw_cli_parse(GOptionContext *ctx, const char *command, int *argc, char ***argv,
                      int *exit_code)
{
  g_autoptr(GError) error = NULL;
  if (g_option_context_parse(ctx, argc, argv, &error))
    return TRUE;
  *exit_code = nw_cli_usage(command, error->message);
  return FALSE;
}

/* ---- method commands ------------------------------------------------------------------ */

struct NwCliMethod {
  char *command;
  const char *method;
  const NwParamSpec *specs; /* the method's table (static) */
  int n_specs;
  NwParams *params;
  char **texts;       /* n_specs option values as given, or NULL */
  GPtrArray *strings; /* help texts the option entries point into */
  char *device_text, *params_file;
  gboolean json, overwrite;
  const NwMethodOps *ops; /* after prepare */
  NwDevice device;        /* --device as given (after prepare_options) */
  gboolean auto_device;   /* --device auto (or none): say what was picked */
  GThread *device_init;   /* CUDA initialisation under way (nw_cli_method_start_device) */
  char cuda_name[256];
  /* run state, shared with the worker's callbacks */
  int max_iterations;
  gboolean progress_line;
  gint64 t_start;
  int iterations;
  double total_ms;
  GMainLoop *loop;
  NwCliReportHook hook; /* optional, nw_cli_method_set_report_hook */
  gpointer hook_data;
  NwCliCancel *batch; /* in a batch (nw_cli_method_set_batch): cancels the job; borrowed */
};

NwCliMethod *nw_cli_method_new(const char *command, const char *method, GError **error)
{
  const NwMethodOps *ops = nw_method_lookup_table(method, error);
  if (ops == NULL)
    return NULL;
  NwCliMethod *m = g_new0(NwCliMethod, 1);
  m->command = g_strdup(command);
  m->method = ops->name;
  m->specs = ops->params;
  m->n_specs = ops->n_params;
  m->params = nw_params_new(ops->params, ops->n_params);
  m->texts = g_new0(char *, ops->n_params + 1);
  m->strings = g_ptr_array_new_with_free_func(g_free);
  return m;
}

void nw_cli_method_free(NwCliMethod *m)
{
  if (m == NULL)
    return;
  g_free(m->command);
  nw_params_free(m->params);
  for (int i = 0; i < m->n_specs; i++) /* not g_strfreev: unset options leave NULL gaps */
    g_free(m->texts[i]);
  g_free(m->texts);
  g_ptr_array_unref(m->strings);
  if (m->device_init != NULL) /* e.g. a run that failed reading its inputs */
    g_thread_join(m->device_init);
  g_free(m->device_text);
  g_free(m->params_file);
  g_free(m);
}

static const char *keep(NwCliMethod *m, char *owned)
{
  g_ptr_array_add(m->strings, owned);
  return owned;
}

/* "Width of the Gaussian ... [mm, 0..50, default 1]" */
static const char *param_help(NwCliMethod *m, const NwParamSpec *s, int index)
{
  g_autofree char *def = nw_params_format(m->params, index);
  GString *h = g_string_new(s->tooltip);
  g_string_append(h, " [");
  if (s->unit != NULL && s->unit[0] != '\0')
    g_string_append_printf(h, "%s, ", s->unit);
  if (s->type == NW_PARAM_ENUM && s->choices != NULL) {
    g_autofree char *all = g_strjoinv("|", (char **)s->choices);
    g_string_append(h, all);
  } else if (s->type == NW_PARAM_BOOL) {
    g_string_append(h, "true|false");
  } else {
    g_string_append_printf(h, "%g..%g", s->min, s->max);
  }
  g_string_append_printf(h, ", default %s%s]", def, s->live ? ", live" : "");
  return keep(m, g_string_free(h, FALSE));
}

static const char *param_arg(NwCliMethod *m, const NwParamSpec *s)
{
  switch (s->type) {
  case NW_PARAM_INT:
    return "N";
  case NW_PARAM_BOOL:
    return "BOOL";
  case NW_PARAM_ENUM:
    return "CHOICE";
  default:
    if (s->unit != NULL && s->unit[0] != '\0')
      return keep(m, g_ascii_strup(s->unit, -1));
    return "X";
  }
}

void nw_cli_method_add_options(NwCliMethod *m, GOptionContext *ctx)
{
  GOptionEntry common[] = {
      {"device", 0, 0, G_OPTION_ARG_STRING, &m->device_text,
       "Where to run: auto (CUDA when a device is present), cpu or cuda", "auto|cpu|cuda"},
      {"json", 0, 0, G_OPTION_ARG_NONE, &m->json,
       "One JSON object per iteration on stdout, then a summary object", NULL},
      {"params", 0, 0, G_OPTION_ARG_FILENAME, &m->params_file,
       "Read parameters from a key file (group [<method>]); options given here win", "FILE"},
      {"overwrite", 0, 0, G_OPTION_ARG_NONE, &m->overwrite,
       "Replace existing outputs (and remove other outputs of an earlier run with this name)",
       NULL},
      {NULL}};
  g_option_context_add_main_entries(ctx, common, NULL);

  GOptionEntry *entries = g_new0(GOptionEntry, m->n_specs + 1);
  for (int i = 0; i < m->n_specs; i++) {
    const NwParamSpec *s = &m->specs[i];
    entries[i] = (GOptionEntry){
        s->name, 0, 0, G_OPTION_ARG_STRING, &m->texts[i], param_help(m, s, i), param_arg(m, s)};
  }
  /* Main entries, not a group, so that plain --help lists them. */
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_free(entries); /* the context copied the entries; their strings live in m */
}

static gboolean read_params_file(NwCliMethod *m, GError **error)
{
  g_autoptr(GKeyFile) kf = g_key_file_new();
  if (!nw_input_file_check(m->params_file, NULL, error))
    return FALSE; /* a FIFO would block the read */
  if (!g_key_file_load_from_file(kf, m->params_file, G_KEY_FILE_NONE, error)) {
    g_prefix_error(error, "%s: ", m->params_file);
    return FALSE;
  }
  if (!nw_params_from_key_file(m->params, kf, m->method, error)) {
    g_prefix_error(error, "%s: ", m->params_file);
    return FALSE;
  }
  return TRUE;
}

gboolean nw_cli_method_prepare_options(NwCliMethod *m, int *exit_code, GError **error)
{
  *exit_code = NW_CLI_EXIT_FAILURE;
  if (m->params_file != NULL && !read_params_file(m, error))
    return FALSE;
  *exit_code = NW_CLI_EXIT_USAGE; /* a bad value on the command line is a usage error */
  for (int i = 0; i < m->n_specs; i++) {
    if (m->texts[i] != NULL &&
        !nw_params_set_string(m->params, m->specs[i].name, m->texts[i], error))
      return FALSE; /* the message names the parameter, the value and the range */
  }
  m->device = NW_DEVICE_AUTO;
  if (m->device_text != NULL && !nw_device_parse(m->device_text, &m->device, error)) {
    g_prefix_error(error, "--device: ");
    return FALSE;
  }
  *exit_code = NW_CLI_EXIT_OK;
  return TRUE;
}

/* Device-init thread: the probe initialises the driver and checks that the device runs this
 * build's kernels; the first call that needs a context (cudaMemGetInfo) makes device 0's
 * primary context, which every thread of the process then shares: the job's worker finds it
 * made. Nothing else is touched here, so running beside the main thread's reading is safe
 * (the probe's answer is computed once, under g_once). */
static gpointer device_init_thread(gpointer data)
{
  (void)data;
  if (nw_method_cuda_available(NULL, 0))
    nw_method_cuda_mem_info(NULL, NULL);
  return NULL;
}

void nw_cli_method_start_device(NwCliMethod *m)
{
  if (m->device != NW_DEVICE_CPU && m->device_init == NULL)
    m->device_init = g_thread_new("nw-cuda-init", device_init_thread, NULL);
}

static gint used_cuda; /* atomic: a batch's workers pick devices too */

gboolean nw_cli_used_cuda(void)
{
  return g_atomic_int_get(&used_cuda);
}

int nw_cli_exit(int code)
{
  if (!nw_cli_used_cuda())
    return code;
  fflush(NULL);
  _exit(code);
}

gboolean nw_cli_method_pick_device(NwCliMethod *m, double *waited_s, GError **error)
{
  const gint64 t0 = g_get_monotonic_time();
  if (m->device_init != NULL)
    g_thread_join(g_steal_pointer(&m->device_init));
  /* Without the thread the lookup probes here, and that wait counts the same. */
  m->ops = nw_method_lookup(m->method, m->device, error);
  const double waited = nw_cli_seconds_since(t0);
  if (waited_s != NULL) /* CUDA's initialisation; the CPU needs none */
    *waited_s = m->ops != NULL && m->ops->device == NW_DEVICE_CUDA ? waited : 0.0;
  if (m->ops == NULL)
    return FALSE;
  if (m->ops->device == NW_DEVICE_CUDA)
    g_atomic_int_set(&used_cuda, TRUE);
  m->auto_device = m->device == NW_DEVICE_AUTO;
  return TRUE;
}

gboolean nw_cli_method_prepare(NwCliMethod *m, int *exit_code, GError **error)
{
  if (!nw_cli_method_prepare_options(m, exit_code, error))
    return FALSE;
  *exit_code = NW_CLI_EXIT_FAILURE; /* no device is a runtime failure */
  if (!nw_cli_method_pick_device(m, NULL, error))
    return FALSE;
  *exit_code = NW_CLI_EXIT_OK;
  return TRUE;
}

void nw_cli_method_set_options(NwCliMethod *m, const char *device, const char *params_file,
                               gboolean overwrite)
{
  g_free(m->device_text);
  g_free(m->params_file);
  m->device_text = g_strdup(device);
  m->params_file = g_strdup(params_file);
  m->overwrite = overwrite;
}

void nw_cli_method_set_batch(NwCliMethod *m, NwCliCancel *cancel)
{
  m->batch = cancel;
}

gboolean nw_cli_method_in_batch(const NwCliMethod *m)
{
  return m->batch != NULL;
}

gboolean nw_cli_method_json(const NwCliMethod *m)
{
  return m->json;
}
gboolean nw_cli_method_overwrite(const NwCliMethod *m)
{
  return m->overwrite;
}
const NwParams *nw_cli_method_params(const NwCliMethod *m)
{
  return m->params;
}
const NwMethodOps *nw_cli_method_ops(const NwCliMethod *m)
{
  return m->ops;
}

/* ---- running the job ------------------------------------------------------------------ */

/* Worker thread. */
static void on_iteration(NwJob *job, const NwIterationReport *r, double ms, gpointer data)
{
  NwCliMethod *m = data;
  (void)job;
  m->iterations = r->iteration;
  m->total_ms += ms;
  if (m->json) {
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    nw_json_member_number(b, "iteration", r->iteration);
    nw_json_member_number(b, "level", r->level);
    nw_json_member_number(b, "ms", ms);
    for (int f = 0; f < r->n_figures; f++)
      nw_json_member_number(b, r->figure_names[f], r->figures[f]);
    json_builder_end_object(b);
    g_autofree char *line = nw_json_to_string(b, FALSE);
    printf("%s\n", line);
    fflush(stdout);
  }
  if (m->progress_line) {
    g_autofree char *total =
        m->max_iterations > 0 ? g_strdup_printf("/%d", m->max_iterations) : g_strdup("");
    fprintf(stderr, "\r%s [%s] iter %d%s", m->method, nw_device_name(m->ops->device), r->iteration,
            total);
    if (r->n_levels > 1) /* multi-resolution methods: which level, 1-based for people */
      fprintf(stderr, "  level %d/%d", r->level + 1, r->n_levels);
    if (r->n_figures > 0)
      fprintf(stderr, "  %s %.4g", r->figure_names[0], r->figures[0]);
    const double ms_per_it = m->total_ms / MAX(1, r->iteration);
    fprintf(stderr, "  %.1f ms/it", ms_per_it);
    /* The time left at the mean pace so far (an upper bound for methods that stop early). */
    if (m->max_iterations > r->iteration)
      fprintf(stderr, "  ETA %.0f s", ms_per_it * (m->max_iterations - r->iteration) / 1000.0);
    fprintf(stderr, "   ");
    fflush(stderr);
  }
  if (m->hook != NULL)
    m->hook(r, ms, m->hook_data);
}

void nw_cli_method_set_report_hook(NwCliMethod *m, NwCliReportHook hook, gpointer data)
{
  m->hook = hook;
  m->hook_data = data;
}

static gboolean quit_loop(gpointer data)
{
  g_main_loop_quit(data);
  return G_SOURCE_REMOVE;
}

/* Worker thread: hand the end over to the main loop (g_idle_add is thread-safe, and a quit
 * queued before the loop runs is still seen, unlike a direct g_main_loop_quit). */
static void on_done(NwJob *job, NwJobState state, const GError *error, gpointer data)
{
  NwCliMethod *m = data;
  (void)job, (void)state, (void)error;
  if (m->loop != NULL) /* in a batch the caller waits on the job instead */
    g_idle_add(quit_loop, m->loop);
}

/* First Ctrl-C: cancel at the next iteration boundary. A second one, for an iteration that
 * takes too long: leave at once (outputs are written after the job, so nothing is half
 * written). */
static gboolean on_signal(gpointer data)
{
  static int count;
  if (++count > 1) {
    fprintf(stderr, "\n%s: interrupted\n", NW_CLI_PROG);
    _exit(NW_CLI_EXIT_CANCELLED);
  }
  nw_job_cancel(data);
  return G_SOURCE_CONTINUE;
}

/* The single command's wait: a main loop on this (the main) thread that turns SIGINT and
 * SIGTERM into a cancel. */
static void wait_in_main_loop(NwCliMethod *m, NwJob *job)
{
  m->loop = g_main_loop_new(NULL, FALSE);
  guint sigint = g_unix_signal_add(SIGINT, on_signal, job);
  guint sigterm = g_unix_signal_add(SIGTERM, on_signal, job);
  nw_job_start(job, FALSE);
  g_main_loop_run(m->loop);
  g_source_remove(sigint);
  g_source_remove(sigterm);
  g_clear_pointer(&m->loop, g_main_loop_unref);
}

NwMethodResult *nw_cli_method_run(NwCliMethod *m, const NwMethodInputs *in, int max_iterations,
                                  GError **error)
{
  g_return_val_if_fail(m->ops != NULL, NULL);
  m->max_iterations = max_iterations;
  if (m->auto_device && m->batch == NULL) {
    /* Said when the job starts, so that failures before it keep stderr to one line. */
    gboolean cuda = m->ops->device == NW_DEVICE_CUDA;
    char why[256] = "";
    if (cuda)
      nw_method_cuda_available(why, sizeof why);
    fprintf(stderr, "%s %s: --device auto picked %s%s%s%s\n", NW_CLI_PROG, m->command,
            nw_device_name(m->ops->device), cuda ? " (" : "", cuda ? why : "", cuda ? ")" : "");
  }
  m->progress_line = m->batch == NULL && isatty(STDERR_FILENO);
  m->iterations = 0;
  m->total_ms = 0.0;
  m->t_start = g_get_monotonic_time();
  NwJobCallbacks cb = {.on_iteration = on_iteration, .on_done = on_done};
  NwJob *job = nw_job_new(m->ops, in, m->params, max_iterations, &cb, m);
  if (m->batch != NULL) {
    nw_job_start(job, FALSE);
    nw_cli_cancel_add(m->batch, job); /* nw_job_wait below blocks this worker thread */
  } else {
    wait_in_main_loop(m, job);
  }
  if (m->progress_line && m->iterations > 0)
    fputc('\n', stderr);

  NwMethodResult *result = NULL;
  if (nw_job_wait(job, error))
    result = nw_job_take_result(job, error);
  if (m->batch != NULL)
    nw_cli_cancel_remove(m->batch, job);
  nw_job_free(job);
  m->total_ms = (double)(g_get_monotonic_time() - m->t_start) / 1000.0;
  return result;
}

/* ---- cancelling a batch's jobs ----------------------------------------------------------- */

struct NwCliCancel {
  GMutex lock;
  gboolean requested;
  GPtrArray *jobs; /* running, borrowed */
};

NwCliCancel *nw_cli_cancel_new(void)
{
  NwCliCancel *c = g_new0(NwCliCancel, 1);
  g_mutex_init(&c->lock);
  c->jobs = g_ptr_array_new();
  return c;
}

void nw_cli_cancel_free(NwCliCancel *c)
{
  if (c == NULL)
    return;
  g_ptr_array_unref(c->jobs);
  g_mutex_clear(&c->lock);
  g_free(c);
}

void nw_cli_cancel_trigger(NwCliCancel *c)
{
  g_mutex_lock(&c->lock);
  c->requested = TRUE;
  for (guint i = 0; i < c->jobs->len; i++)
    nw_job_cancel(c->jobs->pdata[i]);
  g_mutex_unlock(&c->lock);
}

gboolean nw_cli_cancel_requested(NwCliCancel *c)
{
  g_mutex_lock(&c->lock);
  const gboolean r = c->requested;
  g_mutex_unlock(&c->lock);
  return r;
}

void nw_cli_cancel_add(NwCliCancel *c, NwJob *job)
{
  g_mutex_lock(&c->lock);
  g_ptr_array_add(c->jobs, job);
  if (c->requested) /* asked before this job started */
    nw_job_cancel(job);
  g_mutex_unlock(&c->lock);
}

void nw_cli_cancel_remove(NwCliCancel *c, NwJob *job)
{
  g_mutex_lock(&c->lock);
  g_ptr_array_remove_fast(c->jobs, job);
  g_mutex_unlock(&c->lock);
}

double nw_cli_seconds_since(gint64 t0)
{
  return (double)(g_get_monotonic_time() - t0) / G_USEC_PER_SEC;
}

void nw_cli_json_times(JsonBuilder *b, const NwCliTimes *t)
{
  json_builder_set_member_name(b, "time_s");
  json_builder_begin_object(b);
  nw_json_member_number(b, "read", t->read);
  nw_json_member_number(b, "device_init", t->device_init);
  nw_json_member_number(b, t->job_name != NULL ? t->job_name : "register", t->reg);
  nw_json_member_number(b, "write", t->write);
  nw_json_member_number(b, "total", t->total);
  json_builder_end_object(b);
}

void nw_cli_method_print_summary(const NwCliMethod *m, const NwCliTimes *times,
                                 const char *const *outputs)
{
  if (!m->json)
    return;
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "summary");
  json_builder_add_boolean_value(b, TRUE);
  nw_json_member_string(b, "command", m->command);
  nw_json_member_string(b, "method", m->method);
  nw_json_member_string(b, "device", nw_device_name(m->ops->device));
  nw_json_member_number(b, "iterations", m->iterations);
  nw_json_member_number(b, "total_ms", m->total_ms);
  for (int i = 0; i < m->n_specs; i++) {
    g_autofree char *key = g_strdup_printf("param_%s", m->specs[i].name);
    json_builder_set_member_name(b, key);
    nw_json_add_param(b, m->params, i);
  }
  if (times != NULL)
    nw_cli_json_times(b, times);
  json_builder_set_member_name(b, "outputs");
  json_builder_begin_array(b);
  for (int i = 0; outputs != NULL && outputs[i] != NULL; i++)
    nw_json_add_string(b, outputs[i]);
  json_builder_end_array(b);
  json_builder_end_object(b);
  g_autofree char *text = nw_json_to_string(b, FALSE);
  printf("%s\n", text);
  fflush(stdout);
}

/* ---- summaries --------------------------------------------------------------------------- */

/* Worker thread: counts per level and keeps the last report. */
void nw_cli_level_log_hook(const NwIterationReport *r, double ms, gpointer data)
{
  NwCliLevelLog *log = data;
  (void)ms;
  if (r->level >= 0 && r->level < NW_CLI_MAX_LEVELS)
    log->level_iterations[r->level]++;
  log->n_levels = MIN(r->n_levels, NW_CLI_MAX_LEVELS);
  log->last = *r;
}

NwMethodResult *nw_cli_method_run_logged(NwCliMethod *m, const NwMethodInputs *in,
                                         int max_iterations, NwCliRunLog *log, GError **error)
{
  memset(log, 0, sizeof *log);
  nw_cli_method_set_report_hook(m, nw_cli_level_log_hook, &log->log);
  const gint64 t0 = g_get_monotonic_time();
  NwMethodResult *res = nw_cli_method_run(m, in, max_iterations, error);
  log->seconds = nw_cli_seconds_since(t0);
  return res;
}

void nw_cli_summary_begin(JsonBuilder *b, NwCliMethod *m, const char *fixed, const char *moving)
{
  json_builder_begin_object(b);
  nw_json_member_string(b, "command", m->command);
  nw_json_member_string(b, "fixed", fixed);
  nw_json_member_string(b, "moving", moving);
  nw_json_member_string(b, "device", nw_device_name(m->ops->device));
  json_builder_set_member_name(b, "parameters");
  nw_json_add_params(b, m->params);
}

char *nw_cli_summary_end(JsonBuilder *b, const NwCliRunLog *run, const NwCliTimes *times,
                         const char *const *outputs)
{
  const NwCliLevelLog *log = &run->log;
  json_builder_set_member_name(b, "level_iterations");
  json_builder_begin_array(b);
  for (int l = 0; l < log->n_levels; l++)
    nw_json_add_number(b, log->level_iterations[l]);
  json_builder_end_array(b);
  nw_json_member_number(b, "iterations", log->last.iteration);
  json_builder_set_member_name(b, "finished");
  json_builder_add_boolean_value(b, log->last.finished);
  json_builder_set_member_name(b, "final");
  json_builder_begin_object(b);
  for (int f = 0; f < log->last.n_figures; f++)
    nw_json_member_number(b, log->last.figure_names[f], log->last.figures[f]);
  json_builder_end_object(b);
  if (times != NULL)
    nw_cli_json_times(b, times);
  else
    nw_json_member_number(b, "time_s", run->seconds);
  json_builder_set_member_name(b, "outputs");
  json_builder_begin_array(b);
  for (guint i = 0; outputs[i] != NULL; i++)
    nw_json_add_string(b, outputs[i]);
  json_builder_end_array(b);
  json_builder_end_object(b);
  g_autofree char *text = nw_json_to_string(b, FALSE);
  return g_strconcat(text, "\n", NULL);
}

void nw_cli_print_written(const char *const *outputs)
{
  guint n = 0;
  while (outputs[n] != NULL)
    n++;
  printf("wrote %u files:", n);
  for (guint i = 0; i < n; i++)
    printf("%s %s", i > 0 ? "," : "", outputs[i]);
  printf("\n");
}

GPtrArray *nw_cli_output_list(NwOutputs *o, const char *also)
{
  GPtrArray *names = g_ptr_array_new();
  for (const char *const *p = nw_outputs_paths(o); *p != NULL; p++)
    g_ptr_array_add(names, (gpointer)*p);
  if (also != NULL)
    g_ptr_array_add(names, (gpointer)also);
  g_ptr_array_add(names, NULL);
  return names;
}
