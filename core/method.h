/* method.h — the one interface every algorithm/back-end pair implements, and the registry
 * that picks a pair by method name and device.
 *
 * A method is a table of operations on an opaque state. The job runner (job.h) calls them
 * all from ONE worker thread, in this order: create, then step / set_params / publish_frame
 * in any interleaving, then result (optional), then destroy. A CUDA implementation keeps
 * its stream and device buffers in its state and may therefore only be driven from the
 * thread that created it. */
#ifndef NW_METHOD_H
#define NW_METHOD_H

#include <glib.h>

#include "params.h"
#include "volume.h"

G_BEGIN_DECLS

typedef enum {
  NW_DEVICE_AUTO, /* CUDA when a device and a CUDA implementation exist, else CPU */
  NW_DEVICE_CPU,
  NW_DEVICE_CUDA,
} NwDevice;

const char *nw_device_name(NwDevice d); /* "auto", "cpu", "cuda" */
gboolean nw_device_parse(const char *text, NwDevice *out, GError **error);

/* What a method works on; unused members are NULL. Borrowed for the job's lifetime. */
typedef struct {
  const NwVolume *fixed;         /* the reference image, or the only input (smoothing) */
  const NwVolume *moving;        /* the image that is deformed onto fixed */
  const NwVolume *fixed_labels;  /* optional label maps, for Dice */
  const NwVolume *moving_labels;
  /* Optional masks (>= 0.5 inside) on the fixed / moving grid: where a method compares. */
  const NwVolume *fixed_mask;
  const NwVolume *moving_mask;
  /* Optional start: 16 numbers, the 4x4 row-major map fixed world -> moving world (RAS mm),
   * e.g. read from a transform file; NULL: the method's own initialisation. */
  const double *initial_transform;
} NwMethodInputs;

#define NW_MAX_FIGURES 16

/* One iteration's figures, in the order the method defines: "energy", "mse", "ncc",
 * "max_u", "min_jac", "folds", ... Names are static strings. */
typedef struct {
  int iteration;       /* 1-based, counted over all levels */
  int level, n_levels; /* multi-resolution level (0 = coarsest), 1 level when not multi-level */
  double progress;     /* 0..1 of the whole job, for progress bars */
  gboolean finished;   /* the method reached its stopping criterion with this step */
  int n_figures;
  const char *figure_names[NW_MAX_FIGURES];
  double figures[NW_MAX_FIGURES];
} NwIterationReport;

void nw_report_add(NwIterationReport *r, const char *name, double value);
/* Where a one-level run of `iterations` stands after `done` (level 0 of 1, its progress, and
 * finished at the last): the start of smooth's and nlm-surface's reports. */
void nw_report_single_level(NwIterationReport *r, int done, int iterations);

/* A frame for display or for tests: host copies of what is displayable now, on the grid of
 * the current level (its dims and affine: coarse levels are smaller). A CUDA method in a
 * live job instead copies the same things device-to-device into the job's front buffer
 * (cuda/interop/nw_live.h); the frame then only says so (on_device, no volumes). */
typedef struct {
  int iteration;
  NwVolume *image;    /* the current warped/smoothed image; owned by the frame */
  NwVolume *field;    /* current displacement field (voxel units) or NULL; owned */
  gboolean on_device; /* the data went to the device front buffer, not into image/field */
} NwFrame;
void nw_frame_clear(NwFrame *f);

/* Named outputs of a finished job, e.g. "warped", "forward", "inverse", "velocity",
 * "jacobian", and named arrays of numbers, e.g. an affine's "transform" (16 numbers).
 * Volumes and arrays are owned by the result. */
typedef struct {
  GPtrArray *names;   /* char*, owned */
  GPtrArray *volumes; /* NwVolume*, owned */
  GPtrArray *value_names; /* char*, owned */
  GPtrArray *values;      /* GArray* of double, owned */
} NwMethodResult;
NwMethodResult *nw_method_result_new(void);
void nw_method_result_add(NwMethodResult *r, const char *name, NwVolume *owned);
const NwVolume *nw_method_result_get(const NwMethodResult *r, const char *name);
/* Put owned under name in place of the volume there (freed), or add it when there is none. */
void nw_method_result_replace(NwMethodResult *r, const char *name, NwVolume *owned);
/* The volume under name, removed from r and handed to the caller (NULL when none). */
NwVolume *nw_method_result_take(NwMethodResult *r, const char *name);
/* n numbers under name (copied). */
void nw_method_result_add_values(NwMethodResult *r, const char *name, const double *v, int n);
/* The numbers under name and their count, or NULL. */
const double *nw_method_result_get_values(const NwMethodResult *r, const char *name, int *n);
void nw_method_result_free(NwMethodResult *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(NwMethodResult, nw_method_result_free)

typedef struct NwMethodOps NwMethodOps;
struct NwMethodOps {
  const char *name;          /* "smooth", "demons", ... */
  NwDevice device;           /* NW_DEVICE_CPU or NW_DEVICE_CUDA */
  const char *description;   /* one line for --help and the method picker */
  const NwParamSpec *params; /* the parameter table; CPU and CUDA twins share one */
  int n_params;
  gboolean needs_moving;     /* registration methods need fixed and moving */
  /* The figures of its reports that the live plot shows, one panel each, top to bottom:
   * NULL-terminated names as step reports them; NULL: none. CPU and CUDA twins share one. */
  const char *const *plot_figures;
  /* The method takes a moving image on another grid than the fixed one (affine: it maps
   * world to world). Others get the moving image resampled onto the fixed grid first
   * (regrid.h). */
  gboolean any_grid;
  /* The method's input is a level set (a signed distance, mm), not an image to register or
   * smooth: the CLI and the window make one of a mask, labels or a distance (the CLI also of
   * a mesh) with surface_input.h; the window's runs show its zero level set
   * (scene/nw_run_level_set.h). */
  gboolean level_set_input;

  /* Allocate everything the job needs; validate inputs (sizes, finiteness, memory). */
  void *(*create)(const NwMethodInputs *in, const NwParams *p, GError **error);
  /* One iteration; fill the report. */
  gboolean (*step)(void *state, NwIterationReport *report, GError **error);
  /* New parameter values between iterations (only live ones differ; the runner checks). */
  gboolean (*set_params)(void *state, const NwParams *p, GError **error);
  /* Host copy of the displayable state into frame (which the caller clears). */
  gboolean (*publish_frame)(void *state, NwFrame *frame, GError **error);
  /* Optional (CUDA methods): the same state copied device-to-device into front, an
   * NwLiveFront* (cuda/interop/nw_live.h), with nw_live_front_publish on the method's stream. */
  gboolean (*publish_device_frame)(void *state, void *front, GError **error);
  /* Outputs of the job so far. */
  NwMethodResult *(*result)(void *state, GError **error);
  void (*destroy)(void *state);
};

/* Registry: methods register once at start-up: each program's main() calls
 * nw_methods_register_builtin (app/method_table.h); libraries only read the registry. */
void nw_method_register(const NwMethodOps *ops);
/* The pair for name and device. AUTO picks CUDA when a CUDA implementation is registered and
 * nw_method_cuda_available() says a device is present, else CPU. Errors name the method and
 * the device: unknown method, or "cuda" asked for with no device / no CUDA build. */
const NwMethodOps *nw_method_lookup(const char *name, NwDevice device, GError **error);
/* The method's table (parameters, description, needs_moving) whatever the device: its CPU
 * twin, which every method has, else what AUTO picks. Errors as nw_method_lookup. */
const NwMethodOps *nw_method_lookup_table(const char *name, GError **error);
/* Names of registered methods (unique, registration order); free the array only. */
GPtrArray *nw_method_names(void);

/* What the CUDA back end tells the registry about its device when it registers its methods
 * (nw_cuda_register_methods): the one way libraries above core (scene/, ui/) learn about
 * devices. available: whether a usable device exists, and its name (or why not) for
 * messages. mem_info: free and total device memory in bytes (FALSE when unknown). The table
 * is borrowed for the process's life; NULL (the default) means no CUDA in this build. */
typedef struct {
  gboolean (*available)(char *name, size_t name_len);
  gboolean (*mem_info)(size_t *free_bytes, size_t *total_bytes);
  /* Makes the calling thread use this process's device (a job's worker, before create):
   * under mpirun on a host with several GPUs, local rank modulo the device count, so that
   * ranks spread over the GPUs; else device 0. NULL: nothing to do. */
  void (*bind_thread)(void);
} NwCudaProbe;
void nw_method_set_cuda_probe(const NwCudaProbe *probe);
/* The probe's bind_thread, when there is one. */
void nw_method_cuda_bind_thread(void);
gboolean nw_method_cuda_available(char *name, size_t name_len);
/* FALSE without a probe, or when the back end cannot tell. */
gboolean nw_method_cuda_mem_info(size_t *free_bytes, size_t *total_bytes);

G_END_DECLS

#endif
