/* cli_batch.c — `neurowarp-cli batch LIST.csv --out DIR`: registers every pair of the list
 * (cli_batch_list.h) with one method or a chain of them (affine, then demons or fluid), each
 * stage exactly as its single command runs it (cli_affine.h, cli_deformable.h) with PREFIX
 * DIR/ID/METHOD. A pair whose stages' summaries are complete (cli_batch.h) is skipped, so a
 * stopped or killed batch resumes where it stopped; a failed pair is recorded and the batch
 * goes on. The table DIR/batch_summary.csv and .json (cli_batch_table.c) is rewritten as
 * pairs finish. --jobs N runs N pairs at once on N worker threads; with MPI every rank takes
 * its share (cli_batch_share.c) and rank 0 writes the table.
 *
 * Threads: the main thread parses, owns the table, prints the progress and turns Ctrl-C into
 * a cancel of the running jobs (nw_cli_cancel_trigger); each worker thread takes the next
 * pair, runs its stages (each a job on a thread of its own, nw_cli_method_run in batch mode)
 * and posts the result to the main loop. Back end: --device, as the single commands. */
#include <errno.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli_affine.h"
#include "cli_batch.h"
#include "json_out.h"
#include "nw_error.h"

#define MAX_STAGES 4

static const char batch_description[] =
    "LIST.csv names the pairs: a header, then one pair per line, with columns fixed and\n"
    "moving, and optionally id, fixed_mask, moving_mask, fixed_labels, moving_labels and\n"
    "initial_transform (paths relative to the CSV's folder; an empty field is none; the id,\n"
    "by default line<N>, names the pair's folder). Each pair is registered by --method as\n"
    "the single command does it (`neurowarp-cli affine`, `demons`, `fluid`), its outputs\n"
    "under DIR/ID/ with the command's names: DIR/ID/demons_warped.nii.gz,\n"
    "DIR/ID/demons_forward.nii.gz, ..., DIR/ID/demons_summary.json. A chain such as\n"
    "affine,demons (or affine-demons) runs affine first and hands DIR/ID/affine_affine.txt to\n"
    "the next stage as its initial transform; labels go to the deformable stage.\n"
    "Parameters come from --params FILE, one group per method ([affine], [demons], [fluid]).\n"
    "A pair is complete when each stage's summary exists, names the same images and\n"
    "parameters, and lists outputs that all exist: complete pairs are skipped, so running\n"
    "the same command again resumes a stopped or killed batch. A pair that fails is recorded\n"
    "with its message and the batch goes on; the exit status is then 1. Ctrl-C stops the\n"
    "pairs running (they leave no files) and writes the table.\n"
    "DIR/batch_summary.csv and DIR/batch_summary.json: one row per pair (id, status done,\n"
    "skipped-complete, failed, cancelled or not-run, the time split, iterations, final\n"
    "metric, mean Dice with labels, error), and in the JSON the totals with pairs per minute.\n"
    "--jobs N registers N pairs at once on the CPU (give each OMP_NUM_THREADS=cores/N).\n"
    "Under mpirun (an MPI build), rank r of R takes the pairs i with i % R == r, and rank 0\n"
    "writes the table; on a host with several GPUs a rank's CUDA jobs take GPU\n"
    "(local rank mod GPUs): mpirun -n GPUS puts one rank on each.\n\n"
    "Examples:\n"
    "  neurowarp-cli batch pairs.csv --out results\n"
    "  neurowarp-cli batch pairs.csv --out results --method affine,demons --params p.ini\n"
    "  neurowarp-cli batch pairs.csv --out results --device cpu --jobs 2 --json > log.jsonl\n"
    "  mpirun -n 4 neurowarp-cli batch pairs.csv --out results\n";

typedef struct {
  /* set up on the main thread, read-only for the workers */
  const char *list, *dir, *device, *params;
  GPtrArray *rows; /* NwBatchRow* */
  NwBatchStage stages[MAX_STAGES];
  JsonNode *params_json[MAX_STAGES]; /* each stage's parameters, as its summary has them */
  int n_stages, jobs;
  gboolean json;
  NwBatchShare share;
  GArray *mine; /* guint: the indices of this rank's pairs */
  NwCliCancel *cancel;
  gint next; /* atomic: the next index into mine */
  /* main thread */
  NwBatchResult *results;
  NwBatchInfo info;
  GMainLoop *loop;
  int workers_left;
  guint finished, runs;
  double run_wall_s;
  gint64 t_start, t_table;
} Batch;

/* ---- the chain ------------------------------------------------------------------------- */

/* --method: one of affine, demons, fluid, or a chain of them separated by commas in which
 * every stage but the last is affine (its transform starts the next); affine-demons is
 * affine,demons. Usage errors. */
static gboolean parse_method(Batch *b, const char *text, GError **error)
{
  g_auto(GStrv) names = g_strsplit(strcmp(text, "affine-demons") == 0 ? "affine,demons" : text,
                                   ",", -1);
  b->n_stages = 0;
  for (int i = 0; names[i] != NULL; i++) {
    const char *name = g_strstrip(names[i]);
    NwBatchStage s = {0};
    if (strcmp(name, "affine") == 0)
      s = (NwBatchStage){"affine", NULL, NULL};
    else if (strcmp(name, "demons") == 0)
      s = (NwBatchStage){"demons", &nw_cli_demons_command, nw_cli_demons_command.shown[0].name};
    else if (strcmp(name, "fluid") == 0)
      s = (NwBatchStage){"fluid", &nw_cli_fluid_command, nw_cli_fluid_command.shown[0].name};
    if (s.method == NULL || b->n_stages == MAX_STAGES) {
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                  "--method: %s '%s': expected affine, demons, fluid, affine-demons or a chain "
                  "such as affine,demons",
                  s.method == NULL ? "unknown method" : "too many stages in", s.method ? text : name);
      return FALSE;
    }
    if (b->n_stages > 0 && b->stages[b->n_stages - 1].deformable != NULL) {
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                  "--method %s: only affine can start a later stage (its transform is the next "
                  "one's initial transform)",
                  text);
      return FALSE;
    }
    for (int k = 0; k < b->n_stages; k++)
      if (strcmp(b->stages[k].method, s.method) == 0) {
        g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "--method %s: %s twice", text, s.method);
        return FALSE;
      }
    b->stages[b->n_stages++] = s;
  }
  return TRUE;
}

/* A stage's method as its command sets it up (--params, --device), in batch mode; its
 * outputs are replaced: a stage runs only when it is not complete, and what an interrupted
 * run left of it is stale. exit_code as nw_cli_method_prepare_options. */
static NwCliMethod *stage_method(const Batch *b, const NwBatchStage *s, int *exit_code,
                                 GError **error)
{
  *exit_code = NW_CLI_EXIT_FAILURE;
  g_autoptr(NwCliMethod) m = nw_cli_method_new(s->method, s->method, error);
  if (m == NULL)
    return NULL;
  nw_cli_method_set_options(m, b->device, b->params, TRUE);
  nw_cli_method_set_batch(m, b->cancel);
  if (!nw_cli_method_prepare_options(m, exit_code, error))
    return NULL;
  return g_steal_pointer(&m);
}

/* ---- one pair (worker thread) ---------------------------------------------------------- */

/* Runs the stages of pair i that are not complete (and every stage after one that runs: its
 * input changed); the status, error and wall time into r. */
static void run_pair(const Batch *b, NwCliMethod **m, guint i, NwBatchResult *r)
{
  const NwBatchRow *row = b->rows->pdata[i];
  const gint64 t0 = g_get_monotonic_time();
  g_autofree char *folder = g_build_filename(b->dir, row->id, NULL);
  g_autofree char *transform = NULL; /* the affine stage's, for the next stage */
  gboolean ran = FALSE;
  r->status = NW_BATCH_SKIPPED;
  for (int s = 0; s < b->n_stages; s++) {
    const NwBatchStage *st = &b->stages[s];
    g_autofree char *prefix = nw_batch_prefix(b->dir, row, st);
    const NwCliPair pair = {.fixed = row->path[NW_BATCH_FIXED],
                            .moving = row->path[NW_BATCH_MOVING],
                            .fixed_mask = row->path[NW_BATCH_FIXED_MASK],
                            .moving_mask = row->path[NW_BATCH_MOVING_MASK],
                            .fixed_labels = row->path[NW_BATCH_FIXED_LABELS],
                            .moving_labels = row->path[NW_BATCH_MOVING_LABELS],
                            .initial = s == 0 ? row->path[NW_BATCH_INITIAL] : transform,
                            .prefix = prefix};
    g_autofree char *next = st->deformable == NULL ? g_strconcat(prefix, "_affine.txt", NULL) : NULL;
    if (!ran && nw_batch_stage_complete(b->dir, row, st, pair.fixed, pair.moving,
                                        b->params_json[s])) {
      g_free(transform);
      transform = g_steal_pointer(&next);
      continue;
    }
    ran = TRUE;
    g_autoptr(GError) error = NULL;
    gboolean ok = g_mkdir_with_parents(folder, 0777) == 0;
    if (!ok)
      g_set_error(&error, NW_ERROR, NW_ERROR_IO, "%s: cannot make the folder: %s", folder,
                  g_strerror(errno));
    else
      ok = st->deformable != NULL ? nw_cli_deformable_run_pair(st->deformable, m[s], &pair, &error)
                                  : nw_cli_affine_run_pair(m[s], &pair, &error);
    if (!ok) {
      r->status = g_error_matches(error, NW_ERROR, NW_ERROR_CANCELLED) ? NW_BATCH_CANCELLED
                                                                      : NW_BATCH_FAILED;
      r->error = g_strdup_printf("%s: %s", st->method, error->message);
      g_strdelimit(r->error, "\r\n", ' ');
      g_rmdir(folder); /* the folder this pair made, when it holds nothing */
      break;
    }
    g_free(transform);
    transform = g_steal_pointer(&next);
    r->status = NW_BATCH_DONE;
  }
  r->wall_s = nw_cli_seconds_since(t0);
}

typedef struct {
  Batch *b;
  guint index;
  NwBatchResult result;
} Finished;

static gboolean on_finished(gpointer data);
static gboolean on_worker_done(gpointer data);

static gpointer worker(gpointer data)
{
  Batch *b = data;
  NwCliMethod *m[MAX_STAGES] = {NULL};
  g_autoptr(GError) error = NULL;
  int code = 0;
  for (int s = 0; s < b->n_stages; s++)
    m[s] = stage_method(b, &b->stages[s], &code, &error); /* as the main thread's check */
  for (;;) {
    const guint k = (guint)g_atomic_int_add(&b->next, 1);
    if (k >= b->mine->len || nw_cli_cancel_requested(b->cancel))
      break;
    Finished *f = g_new0(Finished, 1);
    nw_batch_result_init(&f->result);
    f->b = b;
    f->index = g_array_index(b->mine, guint, k);
    if (error != NULL) {
      f->result.status = NW_BATCH_FAILED;
      f->result.error = g_strdup(error->message);
    } else {
      run_pair(b, m, f->index, &f->result);
    }
    g_idle_add(on_finished, f);
  }
  for (int s = 0; s < b->n_stages; s++)
    nw_cli_method_free(m[s]);
  g_idle_add(on_worker_done, b);
  return NULL;
}

/* ---- progress and the table (main thread) ---------------------------------------------- */

static void write_table(Batch *b, gboolean final)
{
  const gint64 now = g_get_monotonic_time();
  if (b->share.rank != 0 || (!final && (b->share.size > 1 || now - b->t_table < G_USEC_PER_SEC)))
    return; /* with MPI only rank 0 writes, once, after the merge; else at most once a second */
  b->t_table = now;
  b->info.wall_s = nw_cli_seconds_since(b->t_start);
  for (guint i = 0; i < b->rows->len; i++) {
    NwBatchResult *r = &b->results[i];
    if (!r->loaded && (r->status == NW_BATCH_DONE || r->status == NW_BATCH_SKIPPED))
      nw_batch_result_load(r, b->dir, b->rows->pdata[i], b->stages, b->n_stages);
  }
  g_autoptr(GError) error = NULL;
  if (!nw_batch_table_write(&b->info, b->rows, b->results, &error))
    fprintf(stderr, "%s batch: %s\n", NW_CLI_PROG, error->message);
}

/*   neurowarp-cli batch: [3/10] sub03 done in 12.4 s · 2 done, 1 skipped, 0 failed · ETA 85 s */
static void print_progress(const Batch *b, const NwBatchRow *row, const NwBatchResult *r)
{
  int count[NW_BATCH_CANCELLED + 1] = {0};
  for (guint k = 0; k < b->mine->len; k++)
    count[b->results[g_array_index(b->mine, guint, k)].status]++;
  g_autofree char *rank =
      b->share.size > 1 ? g_strdup_printf(" rank %d/%d", b->share.rank, b->share.size) : g_strdup("");
  fprintf(stderr, "%s batch%s: [%u/%u] %s %s", NW_CLI_PROG, rank, b->finished, b->mine->len,
          row->id, nw_batch_status_name(r->status));
  if (r->status == NW_BATCH_DONE)
    fprintf(stderr, " in %.1f s", r->wall_s);
  else if (r->error != NULL)
    fprintf(stderr, ": %s", r->error);
  fprintf(stderr, " · %d done, %d skipped, %d failed", count[NW_BATCH_DONE],
          count[NW_BATCH_SKIPPED], count[NW_BATCH_FAILED]);
  /* At the mean pace of the pairs run so far, over the jobs running side by side. */
  const guint left = b->mine->len - b->finished;
  if (b->runs > 0 && left > 0)
    fprintf(stderr, " · ETA %.0f s", b->run_wall_s / b->runs * left / b->jobs);
  fprintf(stderr, "\n");
  fflush(stderr);
}

static gboolean on_finished(gpointer data)
{
  g_autofree Finished *f = data;
  Batch *b = f->b;
  NwBatchResult *r = &b->results[f->index];
  nw_batch_result_clear(r);
  *r = f->result;
  b->finished++;
  if (r->status == NW_BATCH_DONE || r->status == NW_BATCH_FAILED) {
    b->runs++;
    b->run_wall_s += r->wall_s;
  }
  print_progress(b, b->rows->pdata[f->index], r);
  if (b->json) {
    if (r->status == NW_BATCH_DONE || r->status == NW_BATCH_SKIPPED)
      nw_batch_result_load(r, b->dir, b->rows->pdata[f->index], b->stages, b->n_stages);
    g_autofree char *line = nw_batch_row_json_line(b->rows->pdata[f->index], r);
    printf("%s\n", line);
    fflush(stdout);
  }
  write_table(b, FALSE);
  return G_SOURCE_REMOVE;
}

static gboolean on_worker_done(gpointer data)
{
  Batch *b = data;
  if (--b->workers_left == 0)
    g_main_loop_quit(b->loop);
  return G_SOURCE_REMOVE;
}

/* First Ctrl-C: cancel the running pairs (they leave no files) and take no more; the table
 * is written. A second one leaves at once (finished pairs are complete on disk). */
static gboolean on_signal(gpointer data)
{
  static int count;
  Batch *b = data;
  if (++count > 1) {
    fprintf(stderr, "\n%s batch: interrupted\n", NW_CLI_PROG);
    _exit(NW_CLI_EXIT_CANCELLED);
  }
  fprintf(stderr, "%s batch: stopping: the pairs running are cancelled, finished ones stay\n",
          NW_CLI_PROG);
  nw_cli_cancel_trigger(b->cancel);
  return G_SOURCE_CONTINUE;
}

/* ---- the command ----------------------------------------------------------------------- */

/* The workers over this rank's pairs, with the main loop until the last one ends. */
static void run_workers(Batch *b)
{
  if (b->mine->len == 0)
    return;
  b->loop = g_main_loop_new(NULL, FALSE);
  guint sigint = g_unix_signal_add(SIGINT, on_signal, b);
  guint sigterm = g_unix_signal_add(SIGTERM, on_signal, b);
  GThread *threads[64];
  b->workers_left = b->jobs;
  for (int j = 0; j < b->jobs; j++)
    threads[j] = g_thread_new("nw-batch", worker, b);
  g_main_loop_run(b->loop);
  for (int j = 0; j < b->jobs; j++)
    g_thread_join(threads[j]);
  g_source_remove(sigint);
  g_source_remove(sigterm);
  g_clear_pointer(&b->loop, g_main_loop_unref);
}

/* The exit status of this rank's pairs: 130 when stopped, 1 when one failed, else 0. */
static int worst_status(const Batch *b)
{
  int worst = NW_CLI_EXIT_OK;
  for (guint k = 0; k < b->mine->len; k++) {
    const NwBatchStatus s = b->results[g_array_index(b->mine, guint, k)].status;
    if (s == NW_BATCH_CANCELLED || (s == NW_BATCH_PENDING && nw_cli_cancel_requested(b->cancel)))
      worst = MAX(worst, NW_CLI_EXIT_CANCELLED);
    else if (s == NW_BATCH_FAILED)
      worst = MAX(worst, NW_CLI_EXIT_FAILURE);
  }
  return worst;
}

/*   batch: 10 pairs: 7 done, 2 skipped-complete, 1 failed in 95 s (4.4 pairs/min)
 *   table: DIR/batch_summary.csv, DIR/batch_summary.json */
static void print_totals(const Batch *b)
{
  int count[NW_BATCH_CANCELLED + 1] = {0};
  for (guint i = 0; i < b->rows->len; i++)
    count[b->results[i].status]++;
  if (b->json) {
    g_autofree char *line = nw_batch_totals_json_line(&b->info, b->results, b->rows->len);
    printf("%s\n", line);
  } else {
    printf("batch: %u pairs: %d done, %d skipped-complete, %d failed", b->rows->len,
           count[NW_BATCH_DONE], count[NW_BATCH_SKIPPED], count[NW_BATCH_FAILED]);
    if (count[NW_BATCH_CANCELLED] + count[NW_BATCH_PENDING] > 0)
      printf(", %d cancelled, %d not run", count[NW_BATCH_CANCELLED], count[NW_BATCH_PENDING]);
    printf(" in %.1f s (%.2f pairs/min)\n", b->info.wall_s,
           b->info.wall_s > 0 ? count[NW_BATCH_DONE] * 60.0 / b->info.wall_s : 0.0);
    printf("table: %s/batch_summary.csv, %s/batch_summary.json\n", b->dir, b->dir);
  }
  fflush(stdout);
}

/* Check --params and --device once on this thread, before any pair (a bad value is a usage
 * error, a missing device a failure), and keep each stage's parameters for the
 * completeness check. */
static int prepare_stages(Batch *b)
{
  for (int s = 0; s < b->n_stages; s++) {
    g_autoptr(GError) error = NULL;
    int code = 0;
    g_autoptr(NwCliMethod) m = stage_method(b, &b->stages[s], &code, &error);
    if (m == NULL)
      return code == NW_CLI_EXIT_USAGE ? nw_cli_usage("batch", error->message) : nw_cli_fail(error);
    if (!nw_cli_method_pick_device(m, NULL, &error))
      return nw_cli_fail(error);
    b->info.device = nw_device_name(nw_cli_method_ops(m)->device);
    if (nw_cli_method_ops(m)->device == NW_DEVICE_CUDA && b->jobs > 1) {
      fprintf(stderr, "%s batch: --jobs %d on CUDA: one pair at a time on the GPU\n", NW_CLI_PROG,
              b->jobs);
      b->jobs = 1;
    }
    g_autoptr(JsonBuilder) jb = json_builder_new();
    nw_json_add_params(jb, nw_cli_method_params(m));
    b->params_json[s] = json_builder_get_root(jb);
  }
  return NW_CLI_EXIT_OK;
}

static int batch_run(Batch *b)
{
  g_autoptr(GError) error = NULL;
  if ((b->rows = nw_batch_list_read(b->list, &error)) == NULL)
    return nw_cli_fail(error);
  if (g_mkdir_with_parents(b->dir, 0777) != 0) {
    g_set_error(&error, NW_ERROR, NW_ERROR_IO, "%s: cannot make the folder: %s", b->dir,
                g_strerror(errno));
    return nw_cli_fail(error);
  }
  int code = prepare_stages(b);
  if (code != NW_CLI_EXIT_OK)
    return code;
  b->results = g_new0(NwBatchResult, b->rows->len);
  for (guint i = 0; i < b->rows->len; i++)
    nw_batch_result_init(&b->results[i]);
  b->mine = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < b->rows->len; i++)
    if (nw_batch_share_takes(&b->share, i))
      g_array_append_val(b->mine, i);
  b->jobs = CLAMP(b->jobs, 1, (int)MAX(1u, b->mine->len));
  b->info.jobs = b->jobs;
  b->info.ranks = b->share.size;
  run_workers(b);
  int worst = worst_status(b);
  nw_batch_share_merge(&b->share, b->results, b->rows->len, &worst);
  write_table(b, TRUE);
  if (b->share.rank == 0)
    print_totals(b);
  return worst;
}

static void batch_clear(Batch *b)
{
  for (guint i = 0; b->results != NULL && i < b->rows->len; i++)
    nw_batch_result_clear(&b->results[i]);
  g_free(b->results);
  for (int s = 0; s < b->n_stages; s++)
    if (b->params_json[s] != NULL)
      json_node_unref(b->params_json[s]);
  if (b->rows != NULL)
    g_ptr_array_unref(b->rows);
  if (b->mine != NULL)
    g_array_unref(b->mine);
  nw_cli_cancel_free(b->cancel);
}

int nw_cli_batch(int argc, char **argv)
{
  Batch b = {.t_start = g_get_monotonic_time(), .jobs = 1};
  nw_batch_share_init(&b.share, &argc, &argv);
  g_autofree char *dir = NULL, *method = NULL, *params = NULL, *device = NULL;
  GOptionEntry entries[] = {
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &dir, "Folder of the results: DIR/ID/METHOD_*",
       "DIR"},
      {"method", 'm', 0, G_OPTION_ARG_STRING, &method,
       "affine, demons, fluid, affine-demons, or a chain such as affine,demons [default demons]",
       "METHOD"},
      {"params", 0, 0, G_OPTION_ARG_FILENAME, &params,
       "Parameters of the stages from a key file, group [<method>] each", "FILE"},
      {"device", 0, 0, G_OPTION_ARG_STRING, &device,
       "Where to run: auto (CUDA when a device is present), cpu or cuda", "auto|cpu|cuda"},
      {"jobs", 'j', 0, G_OPTION_ARG_INT, &b.jobs, "Pairs registered at once (threads) [default 1]",
       "N"},
      {"json", 0, 0, G_OPTION_ARG_NONE, &b.json,
       "One JSON object per finished pair on stdout, then the totals", NULL},
      {NULL}};
  g_autoptr(GOptionContext) ctx = nw_cli_context_new(
      "LIST.csv --out DIR", "Register every pair of a list, resuming where an earlier run stopped.",
      batch_description);
  g_option_context_add_main_entries(ctx, entries, NULL);
  int code = NW_CLI_EXIT_OK;
  g_autoptr(GError) error = NULL;
  if (!nw_cli_parse(ctx, "batch", &argc, &argv, &code))
    ; /* code: the usage error's */
  else if (argc != 2)
    code = nw_cli_usage("batch", argc < 2 ? "expected LIST.csv" : "more than one list");
  else if (dir == NULL)
    code = nw_cli_usage("batch", "missing --out DIR");
  else if (b.jobs < 1 || b.jobs > 64)
    code = nw_cli_usage("batch", "--jobs: must be 1..64");
  else if (!parse_method(&b, method != NULL ? method : "demons", &error))
    code = nw_cli_usage("batch", error->message);
  if (code == NW_CLI_EXIT_OK) {
    b.list = argv[1];
    b.dir = dir;
    b.params = params;
    b.device = device;
    b.cancel = nw_cli_cancel_new();
    b.info = (NwBatchInfo){.list = b.list, .dir = dir, .method = method ? method : "demons",
                           .device = "cpu"};
    code = batch_run(&b);
  }
  batch_clear(&b);
  nw_batch_share_finish(&b.share);
  return code;
}
