/* nw_run_inputs.c — see nw_run_inputs.h. nw_run_inputs_take and the regrid's life on the
 * main thread; its hooks on the job's worker thread. */
#include "nw_run_inputs.h"

#include <string.h>

#include "nw_error.h"
#include "nw_run.h"
#include "regrid.h"

/* The label layers: "moving" in the name and on the moving grid for the moving labels (the
 * method warps them), another on the fixed grid for the fixed ones (Dice of the two). */
static void take_labels(NwScene *scene, const NwVolume *fixed, const NwVolume *moving,
                        NwVolume *inputs[4])
{
  for (guint i = 0; i < nw_scene_n_layers(scene); i++) {
    NwLayer *l = nw_scene_get_layer(scene, i);
    const NwVolume *v = nw_layer_get_volume(l);
    if (nw_layer_get_kind(l) != NW_LAYER_LABELS || v == NULL)
      continue;
    g_autofree char *lower = g_ascii_strdown(nw_layer_get_name(l), -1);
    const int k = strstr(lower, "moving") != NULL ? NW_RUN_MOVING_LABELS : NW_RUN_FIXED_LABELS;
    const NwVolume *grid = k == NW_RUN_MOVING_LABELS ? moving : fixed;
    if (inputs[k] == NULL && nw_volume_same_grid(grid, v))
      inputs[k] = nw_volume_copy(v);
  }
}

gboolean nw_run_inputs_take(NwScene *scene, const char *label, NwVolume *inputs[4],
                            NwLayer **fixed_out, GError **error)
{
  NwLayer *a = nw_scene_get_compare_a(scene), *b = nw_scene_get_compare_b(scene);
  const NwVolume *va = a != NULL ? nw_layer_get_volume(a) : NULL;
  const NwVolume *vb = b != NULL ? nw_layer_get_volume(b) : NULL;
  if (va == NULL || vb == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "run %s: no pair of images to register (open a fixed and a moving image, or "
                "the demo)", label);
    return FALSE;
  }
  /* other grids are resampled, but a slice cannot be registered to a volume: the size
   * message says why */
  if ((va->nz == 1) != (vb->nz == 1) &&
      !nw_volume_check_same_grid(va, nw_layer_get_name(a), vb, nw_layer_get_name(b), error))
    return FALSE;
  for (int i = 0; i < 4; i++)
    g_clear_pointer(&inputs[i], nw_volume_free);
  inputs[NW_RUN_FIXED] = nw_volume_copy(va);
  inputs[NW_RUN_MOVING] = nw_volume_copy(vb);
  take_labels(scene, va, vb, inputs);
  *fixed_out = a;
  return TRUE;
}

/* ---- the worker's regrid ---- */

/* Touched by the worker only (prepare, then finish), and freed after the job is joined. */
struct NwRunRegrid {
  NwRegrid g; /* made by prepare from the job's inputs (the run's copies); read by finish */
  double before[3];
};

NwRunRegrid *nw_run_regrid_new(const NwMethodOps *ops, NwVolume *const inputs[4])
{
  if (ops->any_grid || !ops->needs_moving ||
      nw_volume_same_grid(inputs[NW_RUN_FIXED], inputs[NW_RUN_MOVING]))
    return NULL;
  return g_new0(NwRunRegrid, 1);
}

/* Worker, before the method's create: the moving image and labels onto the fixed grid
 * (identity world map), and the figures there before the registration. */
static gboolean regrid_prepare(NwMethodInputs *in, gpointer data, GError **error)
{
  NwRunRegrid *rg = data;
  if (!nw_regrid_init(&rg->g, in->fixed, in->moving, in->moving_labels, NULL, NULL, error))
    return FALSE;
  in->moving = rg->g.moving_on_fixed;
  in->moving_labels = rg->g.labels_on_fixed;
  nw_pair_figures(in->fixed, in->moving, in->fixed_labels, in->moving_labels, rg->before);
  return TRUE;
}

/* Worker, on the result: maps to the original moving image. */
static gboolean regrid_finish(NwMethodResult *res, gpointer data, GError **error)
{
  NwRunRegrid *rg = data;
  nw_method_result_add_values(res, "before", rg->before, 3);
  return nw_regrid_compose_result(&rg->g, res, error);
}

void nw_run_regrid_attach(NwRunRegrid *rg, NwJob *job)
{
  static const NwJobHooks hooks = {regrid_prepare, regrid_finish};
  nw_job_set_hooks(job, &hooks, rg);
}

void nw_run_regrid_free(NwRunRegrid *rg)
{
  if (rg == NULL)
    return;
  nw_regrid_clear(&rg->g);
  g_free(rg);
}
