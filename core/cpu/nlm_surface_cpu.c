/* nlm_surface_cpu.c — the CPU reference of "nlm-surface" (nlm_surface_method.h): the state,
 * the order of the kernels of nlm_kernels.h in one iteration, re-initialisation every k
 * iterations (sdf_reinit.h), frames and results. Runs on the job's worker thread; OpenMP
 * inside the kernels.
 *
 * State: phi on the whole grid (outside the band it only changes at re-initialisation), the
 * band (N voxel indices, their positions) and the N-sized work arrays, reallocated when the
 * band is taken again. */
#include "nlm_surface_method.h"

#include <math.h>
#include <string.h>

#include "nlm_kernels.h"
#include "nw_error.h"
#include "sdf_reinit.h"

typedef struct {
  NwVolume *phi;  /* current level set, mm */
  NwVolume *phi0; /* the input re-initialised: the reference for displacements */
  NwNlmSettings set;
  int done; /* iterations so far */
  /* the band and its work arrays (N = n, P = p, m = m) */
  int n, p, m;
  guint32 *band;              /* room for every voxel */
  float *pos_mm;              /* N x 3 */
  float *patches;             /* N x P */
  int *nbr;                   /* N x m */
  float *nd, *w;              /* N x m */
  float *wsum, *centre, *out; /* N */
} NlmState;

static void free_band(NlmState *s)
{
  g_clear_pointer(&s->pos_mm, g_free);
  g_clear_pointer(&s->patches, g_free);
  g_clear_pointer(&s->nbr, g_free);
  g_clear_pointer(&s->nd, g_free);
  g_clear_pointer(&s->w, g_free);
  g_clear_pointer(&s->wsum, g_free);
  g_clear_pointer(&s->centre, g_free);
  g_clear_pointer(&s->out, g_free);
}

static void nlm_destroy(void *state)
{
  NlmState *s = state;
  if (s == NULL)
    return;
  free_band(s);
  g_free(s->band);
  nw_volume_free(s->phi);
  nw_volume_free(s->phi0);
  g_free(s);
}

/* Take the band of the current phi and size the work arrays for it. */
static gboolean take_band(NlmState *s, GError **error)
{
  free_band(s);
  s->n = nw_nlm_band_cpu(s->band, s->phi, (float)s->set.band_mm);
  if (!nw_nlm_check_band(s->n, s->set.band_mm, error))
    return FALSE;
  s->p = s->set.patch * s->set.patch * s->set.patch;
  s->m = MIN(s->set.neighbours, s->n - 1);
  const size_t n = (size_t)s->n, nm = n * (size_t)s->m;
  s->pos_mm = g_try_new(float, n * 3);
  s->patches = g_try_new(float, n *(size_t)s->p);
  s->nbr = g_try_new(int, nm);
  s->nd = g_try_new(float, nm);
  s->w = g_try_new(float, nm);
  s->wsum = g_try_new(float, n);
  s->centre = g_try_new(float, n);
  s->out = g_try_new(float, n);
  if (!s->pos_mm || !s->patches || !s->nbr || !s->nd || !s->w || !s->wsum || !s->centre ||
      !s->out) {
    g_set_error(error, NW_ERROR, NW_ERROR_NOMEM,
                "nlm-surface: out of memory for a band of %d voxels (%d neighbours, %d-value "
                "patches)",
                s->n, s->m, s->p);
    return FALSE;
  }
  nw_nlm_positions_cpu(s->pos_mm, s->phi, s->band, s->n);
  return TRUE;
}

static void *nlm_create(const NwMethodInputs *in, const NwParams *p, GError **error)
{
  if (!nw_nlm_check_input(in, error))
    return NULL;
  NlmState *s = g_new0(NlmState, 1);
  if (!nw_nlm_settings(p, &s->set, error) ||
      (s->phi = nw_volume_try_copy(in->fixed, error)) == NULL ||
      !nw_sdf_reinit(s->phi, "nlm-surface input", error) ||
      (s->phi0 = nw_volume_try_copy(s->phi, error)) == NULL ||
      (s->band = g_try_new(guint32, nw_volume_n_voxels(s->phi))) == NULL) {
    if (s->phi0 != NULL && s->band == NULL)
      g_set_error(error, NW_ERROR, NW_ERROR_NOMEM, "nlm-surface: out of memory for the band");
    nlm_destroy(s);
    return NULL;
  }
  if (!take_band(s, error)) {
    nlm_destroy(s);
    return NULL;
  }
  return s;
}

/* Put the band's new values into phi; the RMS and largest change (mm). */
static void scatter(NlmState *s, double *rms, double *most)
{
  double sum = 0.0, top = 0.0;
  for (int j = 0; j < s->n; j++) {
    double d = fabs((double)s->out[j] - (double)s->centre[j]);
    sum += d * d;
    top = MAX(top, d);
    s->phi->data[s->band[j]] = s->out[j];
  }
  *rms = sqrt(sum / s->n);
  *most = top;
}

static gboolean nlm_step(void *state, NwIterationReport *report, GError **error)
{
  NlmState *s = state;
  if (s->done > 0 && s->set.reinit_every > 0 && s->done % s->set.reinit_every == 0 &&
      (!nw_sdf_reinit(s->phi, "nlm-surface level set", error) || !take_band(s, error))) {
    g_prefix_error(error, "iteration %d: ", s->done + 1);
    return FALSE;
  }
  nw_nlm_patches_cpu(s->patches, s->phi, s->band, s->n, s->set.patch);
  for (int j = 0; j < s->n; j++)
    s->centre[j] = s->patches[(size_t)j * s->p + s->p / 2];
  if (!nw_nlm_neighbours_cpu(s->nbr, s->nd, s->patches, s->n, s->p, s->m)) {
    g_set_error(error, NW_ERROR, NW_ERROR_NOMEM,
                "nlm-surface: out of memory for the patch distances of %d band voxels", s->n);
    return FALSE;
  }
  nw_nlm_weights_cpu(s->w, s->wsum, s->nbr, s->nd, s->pos_mm, s->n, s->m, s->set.c1_mm2,
                     s->set.c2_mm2);
  const float dt = nw_nlm_step_size_cpu(s->wsum, s->n);
  nw_nlm_update_cpu(s->out, s->centre, s->nbr, s->w, s->n, s->m, dt);
  double rms, most, wsum = 0.0;
  scatter(s, &rms, &most);
  for (int j = 0; j < s->n; j++)
    wsum += s->wsum[j];
  s->done++;
  nw_nlm_fill_report(report, s->done, s->set.iterations, rms, most, s->n, dt, wsum / s->n);
  return TRUE;
}

/* c1 and c2 are live; the runner refuses other changes before this is called. */
static gboolean nlm_set_params(void *state, const NwParams *p, GError **error)
{
  NlmState *s = state;
  return nw_nlm_settings(p, &s->set, error);
}

static gboolean nlm_publish_frame(void *state, NwFrame *frame, GError **error)
{
  NlmState *s = state;
  frame->iteration = s->done;
  frame->image = nw_volume_try_copy(s->phi, error);
  frame->field = NULL;
  if (frame->image == NULL)
    g_prefix_error(error, "nlm-surface: frame: ");
  return frame->image != NULL;
}

/* phi between re-initialisations is a distance only outside the band: the result is made one
 * everywhere (a copy, so that the job could go on). */
static NwMethodResult *nlm_result(void *state, GError **error)
{
  NlmState *s = state;
  g_autoptr(NwVolume) sdf = nw_volume_try_copy(s->phi, error);
  g_autoptr(NwVolume) input = sdf != NULL ? nw_volume_try_copy(s->phi0, error) : NULL;
  if (input == NULL || !nw_sdf_reinit(sdf, "nlm-surface result", error)) {
    g_prefix_error(error, "nlm-surface: result: ");
    return NULL;
  }
  NwMethodResult *r = nw_method_result_new();
  nw_method_result_add(r, "sdf", g_steal_pointer(&sdf));
  nw_method_result_add(r, "input_sdf", g_steal_pointer(&input));
  return r;
}

const NwMethodOps nw_nlm_surface_cpu_ops = {
    .name = "nlm-surface",
    .device = NW_DEVICE_CPU,
    .description = "Level-set non-local-means denoising of a surface (signed distance in mm)",
    .params = nw_nlm_param_specs,
    .n_params = NW_NLM_N_PARAMS,
    .needs_moving = FALSE,
    .plot_figures = nw_nlm_plot_figures,
    .level_set_input = TRUE,
    .create = nlm_create,
    .step = nlm_step,
    .set_params = nlm_set_params,
    .publish_frame = nlm_publish_frame,
    .result = nlm_result,
    .destroy = nlm_destroy,
};
