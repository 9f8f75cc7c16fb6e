/* nw_run_level_set.c — see nw_run_level_set.h. nw_run_level_set_new, _take_input_mesh and
 * _free on the main thread; the hooks (ls_prepare, ls_finish) on the job's worker thread.
 * CPU work only: the method itself runs on the CPU or CUDA back end. */
#include "nw_run_level_set.h"

#include "level_set.h"
#include "nw_error.h"
#include "nw_run.h"
#include "surface_input.h"

struct NwRunLevelSet {
  /* set on the main thread before the job starts, read by the worker */
  char *who;         /* "run 1", for messages */
  char *name;        /* the source layer's name */
  char *description; /* nw_run_level_set_describe */
  NwSurfaceInputKind kind;
  int label;
  void (*ready)(gpointer data);
  gpointer ready_data;
  /* the worker's, read by the main thread after the job was joined (or, the mesh, taken
   * atomically once ready was called) */
  NwVolume *phi;         /* the job's input: in->fixed points here */
  NwSurface *input_mesh; /* atomic */
  NwLevelSetMeasure measure;
  gboolean measured;
};

/* What to read a volume for, in the window's words: the CLI's hint is its option. */
static const char label_hint[] =
    "under Label in the Run page; a grey-level image such as an MRI is none of these: open a "
    "binary mask, a label volume or a signed distance (mm, negative inside) of the surface "
    "instead";

/* The volume the surface is made of (nw_run_level_set.h says which). */
static NwLayer *pick_layer(NwScene *scene)
{
  NwLayer *active = nw_scene_get_active(scene);
  if (active != NULL && nw_layer_get_kind(active) == NW_LAYER_LABELS &&
      nw_layer_get_volume(active) != NULL)
    return active;
  NwLayer *a = nw_scene_get_compare_a(scene);
  if (a != NULL && nw_layer_get_volume(a) != NULL)
    return a;
  for (guint i = 0; i < nw_scene_n_layers(scene); i++) {
    NwLayer *l = nw_scene_get_layer(scene, i);
    if (nw_layer_get_kind(l) == NW_LAYER_LABELS && nw_layer_get_volume(l) != NULL)
      return l;
  }
  return NULL;
}

/* The kind and label of v, and the words for them; FALSE with the reason. */
static gboolean classify(NwRunLevelSet *ls, NwLayer *source, int label, GError **error)
{
  const NwVolume *v = nw_layer_get_volume(source);
  gboolean has_label = label >= 0, largest = FALSE;
  if (!has_label && nw_layer_get_kind(source) == NW_LAYER_LABELS) {
    if (!nw_surface_input_largest_label(v, &label)) {
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: no voxel holds a label (all 0)",
                  ls->name);
      return FALSE;
    }
    has_label = largest = TRUE;
  }
  if (!nw_surface_input_classify(v, ls->name, has_label, label, label_hint, &ls->kind, error))
    return FALSE;
  ls->label = label;
  if (ls->kind == NW_SURFACE_INPUT_LABELS) {
    const char *table_name = nw_layer_get_label_name(source, label);
    ls->description =
        g_strdup_printf("%s, label %d%s%s%s", ls->name, label, table_name != NULL ? " " : "",
                        table_name != NULL ? table_name : "", largest ? " (the largest)" : "");
  } else {
    ls->description = g_strdup_printf(
        "%s as a %s", ls->name, ls->kind == NW_SURFACE_INPUT_SDF ? "signed distance" : "mask");
  }
  return TRUE;
}

NwRunLevelSet *nw_run_level_set_new(NwScene *scene, const char *run_label, int label,
                                    NwVolume *inputs[4], NwLayer **source_out, GError **error)
{
  NwLayer *source = pick_layer(scene);
  if (source == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "run %s: no volume to take a surface from: open a binary mask, a label volume "
                "or a signed distance (mm, negative inside)",
                run_label);
    return NULL;
  }
  NwRunLevelSet *ls = g_new0(NwRunLevelSet, 1);
  ls->who = g_strdup_printf("run %s", run_label);
  ls->name = g_strdup(nw_layer_get_name(source));
  if (!classify(ls, source, label, error)) {
    g_prefix_error(error, "run %s: ", run_label);
    nw_run_level_set_free(ls);
    return NULL;
  }
  for (int i = 0; i < 4; i++)
    g_clear_pointer(&inputs[i], nw_volume_free);
  inputs[NW_RUN_FIXED] = nw_volume_copy(nw_layer_get_volume(source));
  *source_out = source;
  return ls;
}

/* Worker, before the method's create: the volume (the run's copy) made a level set, and its
 * zero level set meshed for the comparison with the denoised one. */
static gboolean ls_prepare(NwMethodInputs *in, gpointer data, GError **error)
{
  NwRunLevelSet *ls = data;
  ls->phi = nw_surface_input_convert(in->fixed, ls->name, ls->kind, ls->label, error);
  if (ls->phi == NULL)
    return FALSE;
  in->fixed = ls->phi;
  /* no surface to compare with is no reason to stop: the method says what is wrong (a
   * single slice has no cube to mesh) */
  NwSurface *s = nw_level_set_mesh(ls->phi, NULL, NULL);
  if (s != NULL) {
    g_atomic_pointer_set(&ls->input_mesh, s);
    if (ls->ready != NULL)
      ls->ready(ls->ready_data);
  }
  return TRUE;
}

/* Worker, on the result: the mesh with displacements and the figures, once. */
static gboolean ls_finish(NwMethodResult *res, gpointer data, GError **error)
{
  NwRunLevelSet *ls = data;
  ls->measured = nw_level_set_measure(&ls->measure, res, ls->who, error);
  return ls->measured;
}

void nw_run_level_set_attach(NwRunLevelSet *ls, NwJob *job, void (*ready)(gpointer data),
                             gpointer data)
{
  static const NwJobHooks hooks = {ls_prepare, ls_finish};
  ls->ready = ready;
  ls->ready_data = data;
  nw_job_set_hooks(job, &hooks, ls);
}

NwSurface *nw_run_level_set_take_input_mesh(NwRunLevelSet *ls)
{
  return g_atomic_pointer_exchange(&ls->input_mesh, NULL);
}

const char *nw_run_level_set_describe(const NwRunLevelSet *ls)
{
  return ls->description;
}

const NwLevelSetMeasure *nw_run_level_set_measure(const NwRunLevelSet *ls)
{
  return ls->measured ? &ls->measure : NULL;
}

void nw_run_level_set_free(NwRunLevelSet *ls)
{
  if (ls == NULL)
    return;
  g_free(ls->who);
  g_free(ls->name);
  g_free(ls->description);
  nw_volume_free(ls->phi);
  if (ls->input_mesh != NULL)
    nw_surface_free(ls->input_mesh);
  nw_level_set_measure_clear(&ls->measure);
  g_free(ls);
}
