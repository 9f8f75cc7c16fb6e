/* cli_common.h — the frame every neurowarp-cli subcommand shares: exit codes, one-line error
 * messages, and for method commands (smooth, demons, rigid, ...) the options
 * --device/--json/--params plus one option per entry of the method's parameter table, and
 * running the job with progress, JSON lines (json_out.h) and Ctrl-C.
 *
 * Main thread only, except the job callbacks, which run on the job's worker thread and only
 * write to stdout/stderr (the main thread sits in a main loop meanwhile). CPU or CUDA: the
 * method registry picks the back end. */
#ifndef NW_CLI_COMMON_H
#define NW_CLI_COMMON_H

#include <glib.h>

#include <json-glib/json-glib.h>

#include "atomic_file.h"
#include "job.h"
#include "method.h"

G_BEGIN_DECLS

#define NW_CLI_PROG "neurowarp-cli"

typedef enum {
  NW_CLI_EXIT_OK = 0,
  NW_CLI_EXIT_FAILURE = 1,    /* runtime failure: bad file, device error */
  NW_CLI_EXIT_USAGE = 2,      /* unknown option, missing argument */
  NW_CLI_EXIT_CANCELLED = 130 /* Ctrl-C, as a shell reports SIGINT */
} NwCliExit;

/* "neurowarp-cli: <message>" (one line: newlines in the message become spaces) on stderr;
 * returns 130 for NW_ERROR_CANCELLED, else 1. An NW_ERROR_EXISTS message gets
 * " (--overwrite replaces it)". */
int nw_cli_fail(const GError *error);
/* "neurowarp-cli <command>: <message>" and "Try 'neurowarp-cli <command> --help'." on
 * stderr; returns 2. */
int nw_cli_usage(const char *command, const char *message);
/* A GOptionContext for a subcommand: parameter string, summary and description (examples);
 * help is enabled. main() has set the program name to "neurowarp-cli <command>". */
GOptionContext *nw_cli_context_new(const char *params_string, const char *summary,
                                   const char *description);
/* Parse argv with ctx: FALSE and the exit code (2) in *exit_code on a usage error. */
gboolean nw_cli_parse(GOptionContext *ctx, const char *command, int *argc, char ***argv,
                      int *exit_code);

/* The subcommands (cli_info.c, cli_smooth.c, cli_demo_data.c): argv[0] is the subcommand's
 * name; they return the exit status. */
int nw_cli_info(int argc, char **argv);
int nw_cli_smooth(int argc, char **argv);
int nw_cli_demo_data(int argc, char **argv);
int nw_cli_demons(int argc, char **argv);   /* cli_demons.c */
int nw_cli_fluid(int argc, char **argv);    /* cli_fluid.c */
int nw_cli_affine(int argc, char **argv);   /* cli_affine.c */
int nw_cli_resample(int argc, char **argv); /* cli_resample.c */
int nw_cli_denoise_surface(int argc, char **argv); /* cli_denoise_surface.c */
int nw_cli_batch(int argc, char **argv);           /* cli_batch.c */

/* ---- method commands ------------------------------------------------------------------ */

typedef struct NwCliMethod NwCliMethod;

/* For method (a registered name): the table comes from its CPU (else CUDA) implementation. */
NwCliMethod *nw_cli_method_new(const char *command, const char *method, GError **error);
void nw_cli_method_free(NwCliMethod *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(NwCliMethod, nw_cli_method_free)

/* Add --device, --json, --params, --overwrite and one --<name> per parameter to ctx, with
 * unit, range, default and tooltip in --help. */
void nw_cli_method_add_options(NwCliMethod *m, GOptionContext *ctx);
/* After parsing: read --params FILE (group = the method), then the command-line values
 * (which win), then pick the device. Errors are usage errors when the exit code is 2. */
gboolean nw_cli_method_prepare(NwCliMethod *m, int *exit_code, GError **error);
/* nw_cli_method_prepare in steps, for a command that overlaps CUDA's initialisation (a
 * fraction of a second: driver, context) with reading its inputs: prepare_options reads the
 * parameters and --device as prepare does (same errors and exit codes); start_device begins
 * the initialisation on a thread unless --device cpu; pick_device waits for it and picks the
 * back end (errors as prepare's with exit code 1), *waited_s (may be NULL): the seconds this
 * thread waited, 0 when the pick is not CUDA. A thread not waited for is joined by
 * nw_cli_method_free. */
gboolean nw_cli_method_prepare_options(NwCliMethod *m, int *exit_code, GError **error);
void nw_cli_method_start_device(NwCliMethod *m);
gboolean nw_cli_method_pick_device(NwCliMethod *m, double *waited_s, GError **error);
/* A method of this process has run on CUDA (set by nw_cli_method_pick_device): main then
 * leaves the CUDA context to the driver at exit (nw_cli_exit). */
gboolean nw_cli_used_cuda(void);
/* The process's end after a subcommand: with CUDA used, the streams are flushed and the
 * process exits without the CUDA runtime's teardown at exit (destroying the context took
 * 0.13 s on an H100 after a 0.43 s 2 mm demons command; the driver frees it all as the
 * process ends); else a plain return. Every output is renamed into place before this. */
int nw_cli_exit(int code);
/* What the options --device, --params and --overwrite set, for a method run without parsing
 * its options (a stage of `neurowarp-cli batch`); then nw_cli_method_prepare_options. */
void nw_cli_method_set_options(NwCliMethod *m, const char *device, const char *params_file,
                               gboolean overwrite);

/* A batch's jobs (cli_batch.c): a flag and the jobs running now, under a lock; trigger (any
 * thread, e.g. the main thread on Ctrl-C) sets the flag and cancels every job running and
 * any added later. */
typedef struct NwCliCancel NwCliCancel;
NwCliCancel *nw_cli_cancel_new(void);
void nw_cli_cancel_free(NwCliCancel *c);
void nw_cli_cancel_trigger(NwCliCancel *c);
gboolean nw_cli_cancel_requested(NwCliCancel *c);
void nw_cli_cancel_add(NwCliCancel *c, NwJob *job);
void nw_cli_cancel_remove(NwCliCancel *c, NwJob *job);
/* m runs in a batch: nw_cli_method_run may then be called from any thread; it waits on the
 * job without a main loop or signal handlers of its own (cancel cancels it), and prints no
 * progress line and no "--device auto picked" line; the commands print no closing report.
 * cancel is borrowed and must outlive the runs. */
void nw_cli_method_set_batch(NwCliMethod *m, NwCliCancel *cancel);
gboolean nw_cli_method_in_batch(const NwCliMethod *m);

gboolean nw_cli_method_json(const NwCliMethod *m);
/* --overwrite: existing outputs are replaced (and stale ones of the same prefix removed). */
gboolean nw_cli_method_overwrite(const NwCliMethod *m);
const NwParams *nw_cli_method_params(const NwCliMethod *m);
const NwMethodOps *nw_cli_method_ops(const NwCliMethod *m);

/* Run the job on its worker thread while the main thread waits in a main loop that turns
 * SIGINT/SIGTERM into nw_job_cancel (in a batch: see nw_cli_method_set_batch). Progress line on a terminal stderr, JSON lines on
 * stdout with --json. max_iterations <= 0: the method's own rule. Returns the result, or
 * NULL with the error (NW_ERROR_CANCELLED when the user interrupted). */
NwMethodResult *nw_cli_method_run(NwCliMethod *m, const NwMethodInputs *in, int max_iterations,
                                  GError **error);
/* Optional, set before nw_cli_method_run: called on the worker thread after every iteration
 * (after the JSON line), e.g. to keep per-level counts for a summary file. */
typedef void (*NwCliReportHook)(const NwIterationReport *report, double ms, gpointer data);
void nw_cli_method_set_report_hook(NwCliMethod *m, NwCliReportHook hook, gpointer data);
/* Iterations per level and the last report, kept by a report hook (worker thread) for a
 * summary file: nw_cli_method_set_report_hook(m, nw_cli_level_log_hook, &log). */
#define NW_CLI_MAX_LEVELS 16
typedef struct {
  int level_iterations[NW_CLI_MAX_LEVELS];
  int n_levels;
  NwIterationReport last; /* figure names are static strings */
} NwCliLevelLog;
void nw_cli_level_log_hook(const NwIterationReport *report, double ms, gpointer log);

/* A run for a summary file: its level log and wall time. */
typedef struct {
  NwCliLevelLog log;
  double seconds;
} NwCliRunLog;
/* nw_cli_method_run with the level log's hook, timed. */
NwMethodResult *nw_cli_method_run_logged(NwCliMethod *m, const NwMethodInputs *in,
                                         int max_iterations, NwCliRunLog *log, GError **error);
/* Where a command's time went, in seconds of wall time (monotonic clock). */
typedef struct {
  double read;        /* reading and checking the inputs, resampling them onto one grid */
  double device_init; /* waiting for CUDA's initialisation (nw_cli_method_pick_device); 0
                         when the job runs on the CPU */
  double reg;         /* the method's job: "register" in JSON and text, or job_name's */
  double write;       /* writing the outputs */
  double total;       /* the command from its start to the end of writing: the parts and
                         the rest (parsing options, checking outputs) */
  const char *job_name; /* the JSON key of reg; NULL: "register" (e.g. "denoise") */
} NwCliTimes;
/* "time_s": {"read":..,"device_init":..,"register":..,"write":..,"total":..} ("register"
 * named job_name when set) */
void nw_cli_json_times(JsonBuilder *b, const NwCliTimes *t);
/* Seconds since t0 (g_get_monotonic_time), for the parts above. */
double nw_cli_seconds_since(gint64 t0);

/* A summary file's object: begin opens it with "command", "fixed", "moving", "device" and
 * "parameters"; the command adds its members; end adds "level_iterations", "iterations",
 * "finished", "final" (the last report's figures), "time_s" and "outputs", closes it and
 * returns it as one line of text with a newline. "time_s": the split of times
 * (nw_cli_json_times), or without times the job's seconds, run->seconds. */
void nw_cli_summary_begin(JsonBuilder *b, NwCliMethod *m, const char *fixed, const char *moving);
char *nw_cli_summary_end(JsonBuilder *b, const NwCliRunLog *run, const NwCliTimes *times,
                         const char *const *outputs);

/* The paths written into o so far and then also (a file about to be written, e.g. the
 * summary that lists them all): a NULL-terminated array whose strings are borrowed. */
GPtrArray *nw_cli_output_list(NwOutputs *o, const char *also);

/* "wrote 3 files: A, B, C" on stdout, the closing line of a command's report for people. */
void nw_cli_print_written(const char *const *outputs);

/* With --json: the closing summary object {"summary":true,"command":..,"method":..,
 * "device":..,"iterations":..,"total_ms":..,"param_<name>":..,"outputs":[..]} on stdout, and
 * "time_s" (nw_cli_json_times) before "outputs" when times is not NULL. */
void nw_cli_method_print_summary(const NwCliMethod *m, const NwCliTimes *times,
                                 const char *const *outputs);

G_END_DECLS

#endif
