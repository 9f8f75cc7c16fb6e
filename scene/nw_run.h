/* nw_run.h — one job started from the window, shown live.
 *
 * Inputs come from the scene: fixed = the compared image A, moving = B (nw_scene.h), on any
 * grids, and label layers as moving and fixed labels (nw_run_inputs.h). The job runs on a
 * worker thread (core/job.h) in live mode; its state appears as layers of the scene, named
 * with the run's label: "warped · LABEL" (image), "deformation · LABEL" (field, shown as a
 * warped grid) and "surface · LABEL" (iso-surface of the warped image in the 3D view; none
 * for single-slice images, nz == 1); the run hands them out (nw_run_get_warped, _field,
 * _surface).
 *
 * Frames are pulled by the views at the display's pace through the run's frame source
 * (render/live_source.h: at most one per display frame, none while nobody draws):
 *   - CUDA method and views whose GL runs on the jobs' CUDA device (the scene's interop
 *     flag, probed by the axial view; NW_LIVE_INTEROP=0 turns it off): the worker copies
 *     the warped image and field device-to-device into the source's front; the layers
 *     carry layer->live and the views fill shared GL objects from it by interop, the
 *     iso-surface by marching cubes on the GPU.
 *   - otherwise host frames (a CUDA job's reduced on the GPU and downloaded by the source's
 *     own thread), moved into the layers' volumes when a view begins a display frame; their
 *     iso-surface is made on a worker (GTask).
 * When the job ends, the layers get the full-resolution results (warped, forward) from the
 * host result (the surface again on a worker), and the frame source is dropped.
 *
 * A method whose input is a level set (NwMethodOps.level_set_input: "nlm-surface") takes one
 * volume of the scene made a level set phi (nw_run_level_set.h) and has no moving image and
 * no field: its image layer "level set · LABEL" (hidden) gets phi's frames, and "surface ·
 * LABEL" is their zero level set (iso 0 of phi, made on a worker like the iso-surface above),
 * drawn in the 3D view and as contours in the slice views; "input surface · LABEL" (faint)
 * shows the input's surface beside it.
 *
 * Signals (main thread):
 *   "iteration" (gpointer report: const NwIterationReport*, gdouble ms)
 *   "state-changed" (gint NwJobState)
 * Main thread only (the thread that runs or iterates the default main context); worker
 * callbacks are posted to it as idle sources (g_idle_add). */
#ifndef NW_RUN_H
#define NW_RUN_H

#include <glib-object.h>

#include "job.h"
#include "live_source.h"
#include "nw_run_level_set.h"
#include "nw_scene.h"
#include "nw_timeline.h"

G_BEGIN_DECLS

#define NW_TYPE_RUN (nw_run_get_type())
G_DECLARE_FINAL_TYPE(NwRun, nw_run, NW, RUN, GObject)

/* label: short name for the layers and the plot legend ("1", "2"). */
NwRun *nw_run_new(NwScene *scene, const char *label);

/* Start a job of ops with params on the scene's current pair (nw_run_inputs.h: a moving
 * image on another grid is resampled onto the fixed one by the job's worker, unless the
 * method takes any grid). paused: create it and wait for step/resume. FALSE with a message
 * when the scene has no compared pair, a slice is paired with a volume, or a job of this run
 * is still going. Replaces the previous job's live layers. */
gboolean nw_run_start(NwRun *r, const NwMethodOps *ops, const NwParams *params,
                      gboolean paused, GError **error);
void nw_run_pause(NwRun *r);
void nw_run_resume(NwRun *r);
void nw_run_step(NwRun *r);
void nw_run_stop(NwRun *r);
/* Live parameters for the next iteration; FALSE with the job's message otherwise. */
gboolean nw_run_set_params(NwRun *r, const NwParams *params, GError **error);

NwJobState nw_run_get_state(NwRun *r); /* NW_JOB_IDLE before the first start */
gboolean nw_run_is_active(NwRun *r);   /* running or paused */
int nw_run_get_iteration(NwRun *r);    /* completed iterations of the worker */
int nw_run_get_shown_iteration(NwRun *r); /* newest iteration drawn in a view (-1: none) */
/* The job's wall time per iteration (its frames included): mean over the last 10. */
double nw_run_get_ms_per_iteration(NwRun *r);
/* The same over the last 10 iterations while the views pulled frames, and while they did
 * not (live view off, window hidden); 0 where there were none. */
void nw_run_get_ms_split(NwRun *r, double *shown_ms, double *alone_ms);
const NwIterationReport *nw_run_get_last_report(NwRun *r); /* NULL before the first */
/* "CUDA–GL interop" or "host frames" (or NULL before start): how frames reach the views. */
const char *nw_run_get_frame_path(NwRun *r);
/* Bytes of image and field data moved through host memory for display so far: 0 on the
 * interop path (the live-view figure of docs/PERFORMANCE.md). */
guint64 nw_run_get_host_frame_bytes(NwRun *r);
/* The frame source's figures (fps, frames asked for and taken, display frames...), of the
 * running job or the last one. */
void nw_run_get_live_stats(NwRun *r, NwLiveStats *out);
/* Live frames the job published (made only when asked). */
guint64 nw_run_get_live_frames(NwRun *r);
/* The views pull frames (default) or keep the last one while the job runs alone. */
void nw_run_set_live_view(NwRun *r, gboolean on);
gboolean nw_run_get_live_view(NwRun *r);
const char *nw_run_get_label(NwRun *r);
/* The error of a FAILED job (NULL otherwise), valid until the next start. */
const GError *nw_run_get_error(NwRun *r);

#define NW_RUN_MAX_LEVELS 16
typedef enum { NW_RUN_FIXED, NW_RUN_MOVING, NW_RUN_FIXED_LABELS, NW_RUN_MOVING_LABELS } NwRunInput;
/* The job's own time so far: the sum of its iterations' times (pauses not counted). */
double nw_run_get_work_seconds(NwRun *r);
/* Iterations per level as reported (counts[0]: the coarsest); returns the number of
 * levels (0 before the first report). */
int nw_run_get_level_iterations(NwRun *r, int counts[NW_RUN_MAX_LEVELS]);
/* The inputs of the last start (NULL when not given), and the results of the ended job
 * (NULL while none). */
const NwVolume *nw_run_get_input(NwRun *r, NwRunInput which);
const NwMethodResult *nw_run_get_result(NwRun *r);
/* MSE and NCC of the fixed and moving images as given, at the last start (NAN for a method
 * without a moving image): the figures before the registration. */
void nw_run_get_before(NwRun *r, double *mse, double *ncc);
const NwMethodOps *nw_run_get_ops(NwRun *r);
/* The run's layers in the scene (NULL before the first start; the surface also until the
 * first iso-surface is made on the host path): warped image, deformation field, iso-surface.
 * Borrowed: they go when the run is disposed or starts again. */
NwLayer *nw_run_get_warped(NwRun *r);
NwLayer *nw_run_get_field(NwRun *r);
NwLayer *nw_run_get_surface(NwRun *r);
/* Level-set methods: the input's surface (NULL until the worker made it, and for others). */
NwLayer *nw_run_get_input_surface(NwRun *r);
/* The label a level set is made of at the next start (nw_run_level_set.h): >= 0, or
 * NW_RUN_LABEL_AUTO (the default) for what the volume itself says. */
void nw_run_set_surface_label(NwRun *r, int label);
int nw_run_get_surface_label(NwRun *r);
/* The level set of the last start of a level-set method (NULL otherwise). */
const NwRunLevelSet *nw_run_get_level_set(NwRun *r);

/* The results of the ended job, as the CLI writes them: PREFIX_warped.nii.gz,
 * PREFIX_forward.nii.gz, ... (core/result_io.h; after a regrid or an affine stage the fields
 * map fixed -> ORIGINAL moving, regrid.h), with an affine stage ("affine",
 * "affine-demons") PREFIX_affine.txt, PREFIX_affine.mat and PREFIX_fsl.mat, and
 * PREFIX_surface.gii (the iso-surface of the warped image; not for single-slice images) —
 * atomically each. A level-set method's: PREFIX_sdf.nii.gz and PREFIX_surface.gii as
 * neurowarp-cli denoise-surface writes them (core/level_set_result.h). FALSE with a message when no ended job has results.
 * written: the paths written are appended (may be NULL). */
gboolean nw_run_save_results(NwRun *r, const char *prefix, GPtrArray *written, GError **error);

/* The run's timeline (nw_timeline.h): host copies of the frames its layers were given (host
 * frames only: interop frames never reach the host) and the result, cleared on start. */
const NwTimeline *nw_run_get_timeline(NwRun *r);
/* Show the kept frame of iteration k (the newest at or before k) in the run's layers while
 * or after the job runs; frames keep arriving into the timeline meanwhile. k < 0: live again
 * (the job's frames, or the result once it has ended). FALSE with a message when no kept
 * frame is that old. nw_run_get_shown_iteration then says the frame's iteration. */
gboolean nw_run_show_iteration(NwRun *r, int k, GError **error);
/* Iteration of the timeline frame shown, -1 while live. */
int nw_run_get_scrub(NwRun *r);

G_END_DECLS

#endif
