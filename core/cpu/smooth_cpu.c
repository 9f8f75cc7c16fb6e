/* smooth_cpu.c — the CPU reference of the "smooth" method (smooth_method.h): each iteration
 * replaces the image by its Gaussian smoothing (nw_smooth_gaussian_mm, sigma in mm converted
 * per axis with the voxel spacing, clamped borders); the parameter table, input check and
 * report are smooth_common.c's, shared with the CUDA twin (cuda/smooth_cuda.cu). Runs on the
 * job's worker thread; OpenMP inside smooth.c.
 *
 * State: the current image (a copy of the input, same grid and components) and a copy of the
 * previous iteration's image, kept to measure how much one iteration changed. */
#include "smooth_method.h"

#include <math.h>
#include <string.h>

#include "nw_error.h"
#include "smooth.h"

typedef struct {
  NwVolume *image; /* current image, nx*ny*nz*nc floats */
  NwVolume *prev;  /* the image before the last iteration, same shape */
  double sigma_mm;
  int iterations; /* the method finishes after this many steps */
  int done;       /* steps so far */
} SmoothState;

/* A copy of v that reports a shortage of memory instead of aborting (volumes can be large). */
static NwVolume *copy_volume(const NwVolume *v, GError **error)
{
  NwVolume *c = nw_volume_new_like(v, v->nc, error);
  if (c != NULL)
    memcpy(c->data, v->data, nw_volume_n_floats(v) * sizeof(float));
  return c;
}

static void smooth_destroy(void *state)
{
  SmoothState *s = state;
  if (s == NULL)
    return;
  nw_volume_free(s->image);
  nw_volume_free(s->prev);
  g_free(s);
}

static void *smooth_create(const NwMethodInputs *in, const NwParams *p, GError **error)
{
  if (!nw_smooth_check_input(in, error))
    return NULL;
  SmoothState *s = g_new0(SmoothState, 1);
  s->image = copy_volume(in->fixed, error);
  s->prev = s->image != NULL ? copy_volume(in->fixed, error) : NULL;
  if (s->prev == NULL) {
    g_prefix_error(error, "smooth: ");
    smooth_destroy(s);
    return NULL;
  }
  s->sigma_mm = nw_params_get(p, "sigma");
  s->iterations = nw_params_get_int(p, "iterations");
  return s;
}

/* RMS over all floats of (a - b); a and b have the same shape. */
static double rms_difference(const NwVolume *a, const NwVolume *b)
{
  size_t n = nw_volume_n_floats(a);
  double sum = 0.0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
  for (size_t e = 0; e < n; e++) {
    double d = (double)a->data[e] - (double)b->data[e];
    sum += d * d;
  }
  return sqrt(sum / (double)n);
}

static gboolean smooth_step(void *state, NwIterationReport *report, GError **error)
{
  SmoothState *s = state;
  memcpy(s->prev->data, s->image->data, nw_volume_n_floats(s->image) * sizeof(float));
  if (!nw_smooth_gaussian_mm(s->image, s->sigma_mm, error)) {
    g_prefix_error(error, "smooth: iteration %d: ", s->done + 1);
    return FALSE;
  }
  s->done++;
  NwVolumeStats st;
  nw_volume_stats(s->image, &st);
  nw_smooth_fill_report(report, s->done, s->iterations, rms_difference(s->image, s->prev), st.mean,
                        st.min, st.max);
  return TRUE;
}

/* Only sigma is live; the runner refuses a change of iterations before it gets here. */
static gboolean smooth_set_params(void *state, const NwParams *p, GError **error)
{
  SmoothState *s = state;
  s->sigma_mm = nw_params_get(p, "sigma");
  return TRUE;
}

static gboolean smooth_publish_frame(void *state, NwFrame *frame, GError **error)
{
  SmoothState *s = state;
  frame->iteration = s->done;
  frame->image = copy_volume(s->image, error);
  frame->field = NULL;
  if (frame->image == NULL)
    g_prefix_error(error, "smooth: frame: ");
  return frame->image != NULL;
}

static NwMethodResult *smooth_result(void *state, GError **error)
{
  SmoothState *s = state;
  NwVolume *copy = copy_volume(s->image, error);
  if (copy == NULL) {
    g_prefix_error(error, "smooth: result: ");
    return NULL;
  }
  NwMethodResult *r = nw_method_result_new();
  nw_method_result_add(r, "smoothed", copy);
  return r;
}

const NwMethodOps nw_smooth_cpu_ops = {
    .name = "smooth",
    .device = NW_DEVICE_CPU,
    .description = "Iterated Gaussian smoothing of one image (the reference pipeline test)",
    .params = nw_smooth_param_specs,
    .n_params = NW_SMOOTH_N_PARAMS,
    .needs_moving = FALSE,
    .plot_figures = nw_smooth_plot_figures,
    .create = smooth_create,
    .step = smooth_step,
    .set_params = smooth_set_params,
    .publish_frame = smooth_publish_frame,
    .result = smooth_result,
    .destroy = smooth_destroy,
};
