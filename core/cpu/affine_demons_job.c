/* affine_demons_job.c — the job of "affine-demons" (affine_demons_method.h) that every back
 * end's table shares: the affine job, then the demons job on the moving image resampled
 * through the transform found. The job's worker thread. */
#include "affine_demons_method.h"

#include "affine_method.h"
#include "demons_method.h"
#include "nw_error.h"
#include "regrid.h"

/* The affine stage rows first in the panel: they act first. The rigid-before-deformable
 * default is "affine": demons corrects what is left, not a scale or shear. */
const NwParamSpec nw_affine_demons_param_specs[NW_AFFINE_DEMONS_N_PARAMS] = {
    NW_AFFINE_ROW_TRANSFORM("affine-transform", 2),
    NW_AFFINE_ROW_METRIC("affine-metric"),
    NW_AFFINE_ROW_LEVELS("affine-levels"),
    NW_AFFINE_ROW_ITERATIONS("affine-iterations"),
    NW_AFFINE_ROW_INIT("affine-init"),
    NW_DEMONS_PARAM_ROWS,
};

const char *const nw_affine_demons_plot_figures[] = {"cost", "energy", "ncc", "min_jac", NULL};

/* The composite's parameter names that the affine stage takes, without "affine-". */
static const char *const affine_keys[] = {"transform", "metric", "levels", "iterations", "init"};

typedef struct {
  const NwMethodOps *stage[2]; /* affine, demons */
  NwMethodInputs in;           /* the pair as given; borrowed */
  NwParams *p[2];              /* each stage's parameters */
  void *state[2];              /* stage 0 until it has finished, then stage 1 */
  int stage_now;
  NwMethodResult *affine;      /* the affine stage's result, once it has finished */
  NwRegrid g;                  /* moving and labels through its transform */
  NwVolume *moving_mask_on_fixed;       /* the moving mask through it, with a moving mask */
  int offset_iterations, offset_levels; /* of the affine stage, added to demons' reports */
  double before[3];
} AffineDemons;

/* Each stage's values from the composite's (the rest keep the stage's defaults). */
static void split_params(AffineDemons *s, const NwParams *p)
{
  for (gsize k = 0; k < G_N_ELEMENTS(affine_keys); k++) {
    g_autofree char *name = g_strconcat("affine-", affine_keys[k], NULL);
    s->p[0]->values[nw_params_find(s->p[0], affine_keys[k])] = nw_params_get(p, name);
  }
  for (int i = 0; i < s->p[1]->n; i++)
    s->p[1]->values[i] = nw_params_get(p, s->p[1]->specs[i].name);
}

void nw_affine_demons_op_destroy(void *state)
{
  AffineDemons *s = state;
  for (int i = 0; i < 2; i++) {
    if (s->state[i] != NULL)
      s->stage[i]->destroy(s->state[i]);
    nw_params_free(s->p[i]);
  }
  nw_method_result_free(s->affine);
  nw_regrid_clear(&s->g);
  nw_volume_free(s->moving_mask_on_fixed);
  g_free(s);
}

void *nw_affine_demons_new(const NwMethodOps *affine, const NwMethodOps *demons,
                           const NwMethodInputs *in, const NwParams *p, GError **error)
{
  AffineDemons *s = g_new0(AffineDemons, 1);
  s->stage[0] = affine;
  s->stage[1] = demons;
  s->in = *in;
  for (int i = 0; i < 2; i++)
    s->p[i] = nw_params_new(s->stage[i]->params, s->stage[i]->n_params);
  split_params(s, p);
  /* the affine stage compares the images only: labels are the demons stage's */
  const NwMethodInputs ain = {.fixed = in->fixed,
                              .moving = in->moving,
                              .fixed_mask = in->fixed_mask,
                              .moving_mask = in->moving_mask,
                              .initial_transform = in->initial_transform};
  if ((s->state[0] = affine->create(&ain, s->p[0], error)) == NULL) {
    nw_affine_demons_op_destroy(s);
    return NULL;
  }
  nw_regrid_before(in->fixed, in->moving, in->fixed_labels, in->moving_labels, s->before);
  return s;
}

/* The affine stage has finished: its result, the moving image, labels and mask through its
 * transform, and the demons stage on them with the masks (the fixed one as given). */
static gboolean next_stage(AffineDemons *s, const NwIterationReport *last, GError **error)
{
  s->affine = s->stage[0]->result(s->state[0], error);
  s->stage[0]->destroy(s->state[0]);
  s->state[0] = NULL;
  const double *t = s->affine != NULL ? nw_method_result_get_values(s->affine, "transform", NULL)
                                      : NULL;
  if (t == NULL) {
    if (s->affine != NULL)
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "affine-demons: no affine transform");
    return FALSE;
  }
  s->offset_iterations = last->iteration;
  s->offset_levels = last->n_levels;
  /* the affine stage's own warped image, made where its images are (the GPU on CUDA), is
   * the demons stage's moving image when it was sampled as the regrid would (linear) */
  g_autofree char *interp = nw_params_format(s->p[0], nw_params_find(s->p[0], "interp"));
  NwVolume *warped =
      g_strcmp0(interp, "linear") == 0 ? nw_method_result_take(s->affine, "warped") : NULL;
  if (!nw_regrid_init(&s->g, s->in.fixed, s->in.moving, s->in.moving_labels, t, warped, error))
    return FALSE;
  if (s->in.moving_mask != NULL && (s->moving_mask_on_fixed = nw_regrid_mask(
                                        &s->g, s->in.fixed, s->in.moving_mask, error)) == NULL)
    return FALSE;
  const NwMethodInputs din = {.fixed = s->in.fixed,
                              .moving = s->g.moving_on_fixed,
                              .fixed_labels = s->in.fixed_labels,
                              .moving_labels = s->g.labels_on_fixed,
                              .fixed_mask = s->in.fixed_mask,
                              .moving_mask = s->moving_mask_on_fixed};
  s->stage_now = 1;
  return (s->state[1] = s->stage[1]->create(&din, s->p[1], error)) != NULL;
}

gboolean nw_affine_demons_op_step(void *state, NwIterationReport *r, GError **error)
{
  AffineDemons *s = state;
  const int k = s->stage_now;
  if (!s->stage[k]->step(s->state[k], r, error))
    return FALSE;
  /* the demons stage's share of the progress bar: it usually takes most of the time */
  if (k == 0) {
    const int demons_levels = nw_params_get_int(s->p[1], "levels");
    r->progress *= 0.25;
    r->n_levels += demons_levels;
    if (r->finished) {
      r->finished = FALSE;
      NwIterationReport last = *r;
      last.n_levels -= demons_levels;
      return next_stage(s, &last, error);
    }
    return TRUE;
  }
  r->iteration += s->offset_iterations;
  r->level += s->offset_levels;
  r->n_levels += s->offset_levels;
  r->progress = 0.25 + 0.75 * r->progress;
  return TRUE;
}

gboolean nw_affine_demons_op_set_params(void *state, const NwParams *p, GError **error)
{
  AffineDemons *s = state;
  split_params(s, p); /* the affine stage has no live parameters: only demons' differ */
  return s->state[1] == NULL || s->stage[1]->set_params == NULL ||
         s->stage[1]->set_params(s->state[1], s->p[1], error);
}

gboolean nw_affine_demons_op_publish_frame(void *state, NwFrame *frame, GError **error)
{
  AffineDemons *s = state;
  return s->stage[s->stage_now]->publish_frame(s->state[s->stage_now], frame, error);
}

/* The affine numbers the result carries besides the demons outputs. */
static void add_affine_values(NwMethodResult *res, const NwMethodResult *affine)
{
  static const char *const names[] = {"transform", "centre", "parameters", "cost",
                                      "evaluations"};
  for (gsize i = 0; i < G_N_ELEMENTS(names); i++) {
    int n = 0;
    const double *v = nw_method_result_get_values(affine, names[i], &n);
    if (v != NULL && nw_method_result_get_values(res, names[i], NULL) == NULL)
      nw_method_result_add_values(res, names[i], v, n);
  }
}

NwMethodResult *nw_affine_demons_op_result(void *state, GError **error)
{
  AffineDemons *s = state;
  NwMethodResult *res = NULL;
  if (s->stage_now == 0) { /* stopped during the affine stage */
    res = s->stage[0]->result(s->state[0], error);
  } else if ((res = s->stage[1]->result(s->state[1], error)) != NULL) {
    if (!nw_regrid_compose_result(&s->g, res, error))
      g_clear_pointer(&res, nw_method_result_free);
    else
      add_affine_values(res, s->affine);
  }
  if (res != NULL)
    nw_method_result_add_values(res, "before", s->before, 3);
  return res;
}
