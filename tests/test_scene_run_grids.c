/* test_scene_run_grids.c — runs (scene/nw_run.h) on pairs whose images lie on different
 * grids, without a display or a GPU: a phantom defined in world millimetres is sampled on a
 * fixed grid (32³, 2 mm, RAS) and, moved by a known similarity T (fixed world -> moving
 * world) plus a local bump at the head's edge, on a moving grid of another size, voxel size (2.5 mm),
 * orientation (LAS) and origin, with label maps on each grid.
 *   - "affine-demons" runs to the end on the CPU: the transform it found is T within a voxel,
 *     Dice of the labels and NCC of the images are far better than before, the forward
 *     field maps fixed -> ORIGINAL moving (through T), and saving writes PREFIX_affine.txt
 *     (read back equal), PREFIX_fsl.mat and the fields.
 *   - plain "demons" on a pair on different grids (the same anatomy, scanner coordinates):
 *     no "one grid" refusal; the job resamples the moving image on its worker and ends with
 *     results on the fixed grid, better than before.
 * Main thread, jobs on their workers. */
#include <math.h>
#include <string.h>

#include "affine_resample.h"
#include "field.h"
#include "method_table.h"
#include "nw_run.h"
#include "nw_scene.h"
#include "ras_affine.h"
#include "testutil.h"
#include "transform_io.h"

/* The known map fixed world -> moving world: scale 1.04, 6 degrees about z, then a shift. */
static void true_transform(double t[16])
{
  const double s = 1.04, a = 6.0 * G_PI / 180.0;
  const double m[16] = {s * cos(a), -s * sin(a), 0, 5.0, s * sin(a), s * cos(a), 0, -3.0,
                        0,          0,           s, 2.0, 0,          0,          0, 1};
  memcpy(t, m, sizeof m);
}

static double sigmoid_inside(const double x[3], const double c[3], const double r[3])
{
  double q = 0.0;
  for (int a = 0; a < 3; a++)
    q += (x[a] - c[a]) * (x[a] - c[a]) / (r[a] * r[a]);
  return 1.0 / (1.0 + exp(8.0 * (sqrt(q) - 1.0)));
}

/* The phantom at world point x (mm): a head ellipsoid with three blobs of other contrasts;
 * labels 1 and 2 the first two blobs, 3 the rest of the head. */
static const double head_c[3] = {0, 0, 0}, head_r[3] = {24, 20, 18};
static const double blob_c[3][3] = {{-8, 5, 3}, {9, -6, -4}, {2, 10, -8}};
static const double blob_r[3][3] = {{7, 6, 5}, {5, 6, 4}, {4, 4, 5}};
static const double blob_v[3] = {60, 90, -8};

static double phantom(const double x[3])
{
  double v = 20.0 * sigmoid_inside(x, head_c, head_r);
  for (int b = 0; b < 3; b++)
    v += blob_v[b] * sigmoid_inside(x, blob_c[b], blob_r[b]);
  return v;
}

static double phantom_label(const double x[3])
{
  for (int b = 0; b < 2; b++)
    if (sigmoid_inside(x, blob_c[b], blob_r[b]) > 0.5)
      return b + 1;
  return sigmoid_inside(x, head_c, head_r) > 0.5 ? 3 : 0;
}

/* The moving anatomy at moving world point y: T^-1 y, then a smooth local bump (up to 2.5 mm
 * along x at the head's left edge) that no affine undoes; away from the bright blobs, so the
 * affine stage still finds T (a bump on a blob pulls the transform off by ~2 mm). */
static void moving_source(const double t[16], const double y[3], double x[3])
{
  double inv[16];
  nw_affine_inverse(t, inv);
  for (int r = 0; r < 3; r++)
    x[r] = inv[r * 4 + 0] * y[0] + inv[r * 4 + 1] * y[1] + inv[r * 4 + 2] * y[2] + inv[r * 4 + 3];
  static const double bump_c[3] = {-20, -8, 0};
  double d2 = 0.0;
  for (int a = 0; a < 3; a++)
    d2 += (x[a] - bump_c[a]) * (x[a] - bump_c[a]);
  x[0] += 2.5 * exp(-d2 / (2.0 * 6.0 * 6.0));
}

/* Sample the phantom (or its labels) on grid; t NULL: the fixed anatomy. */
static NwVolume *sample(int nx, int ny, int nz, const double vox_to_ras[16], const double *t,
                        gboolean labels)
{
  NwVolume *v = nw_volume_new(nx, ny, nz, 1, NULL);
  nw_volume_set_affine(v, vox_to_ras);
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++) {
        const double ijk[3] = {i, j, k};
        double y[3], x[3];
        nw_volume_voxel_to_world(v, ijk, y);
        if (t != NULL)
          moving_source(t, y, x);
        else
          memcpy(x, y, sizeof x);
        v->data[nw_volume_index(v, i, j, k)] = (float)(labels ? phantom_label(x) : phantom(x));
      }
  return v;
}

/* fixed: 32³ at 2 mm, RAS, centred on the origin. moving: 28 x 30 x 26 at 2.5 mm, LAS (i runs
 * right to left), its centre a few mm off. */
static const double fixed_affine[16] = {2, 0, 0, -31, 0, 2, 0, -31, 0, 0, 2, -31, 0, 0, 0, 1};
static const double moving_affine[16] = {-2.5, 0, 0, 36.75, 0, 2.5, 0, -37.25,
                                         0,    0, 2.5, -29.25, 0, 0, 0, 1};

typedef struct {
  NwScene *scene;
  NwLayer *layers[4]; /* fixed, moving, fixed labels, moving labels */
  NwRun *run;
} Rig;

static void rig_init(Rig *rig, const double *t)
{
  nw_methods_register_builtin();
  rig->scene = nw_scene_new();
  rig->layers[0] = nw_layer_new_volume(NW_LAYER_IMAGE, "fixed",
                                       sample(32, 32, 32, fixed_affine, NULL, FALSE));
  rig->layers[1] = nw_layer_new_volume(NW_LAYER_IMAGE, "moving",
                                       sample(28, 30, 26, moving_affine, t, FALSE));
  rig->layers[2] = nw_layer_new_volume(NW_LAYER_LABELS, "fixed labels",
                                       sample(32, 32, 32, fixed_affine, NULL, TRUE));
  rig->layers[3] = nw_layer_new_volume(NW_LAYER_LABELS, "moving labels",
                                       sample(28, 30, 26, moving_affine, t, TRUE));
  for (int i = 0; i < 4; i++)
    nw_scene_add_layer(rig->scene, rig->layers[i]);
  nw_scene_set_compare_pair(rig->scene, rig->layers[0], rig->layers[1]);
  rig->run = nw_run_new(rig->scene, "1");
}

static void rig_clear(Rig *rig)
{
  g_object_run_dispose(G_OBJECT(rig->run));
  g_clear_object(&rig->run);
  while (g_main_context_iteration(NULL, FALSE))
    ;
  for (int i = 0; i < 4; i++)
    g_clear_object(&rig->layers[i]);
  g_clear_object(&rig->scene);
}

/* Start ops with p, then iterate the main loop until the job ends (at most 240 s). */
static void run_to_end(Rig *rig, const NwMethodOps *ops, NwParams *p)
{
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_run_start(rig->run, ops, p, FALSE, &error));
  g_assert_no_error(error);
  const gint64 until = g_get_monotonic_time() + 240 * G_USEC_PER_SEC;
  while (nw_run_is_active(rig->run) && g_get_monotonic_time() < until) {
    while (g_main_context_iteration(NULL, FALSE))
      ;
    g_usleep(2000);
  }
  if (nw_run_get_error(rig->run) != NULL)
    g_error("%s", nw_run_get_error(rig->run)->message);
  g_assert_cmpint(nw_run_get_state(rig->run), ==, NW_JOB_FINISHED);
}

static double mean_dice(const NwVolume *a, const NwVolume *b)
{
  double mean = 0.0;
  g_array_unref(nw_labels_dice(a, b, &mean));
  return mean;
}

/* The world point the forward field sends fixed voxel (i, j, k) to: x + F_lin u (the field
 * is in fixed voxel units, field_affine.h). */
static void field_target(const NwVolume *u, const int ijk[3], double out[3])
{
  const double p[3] = {ijk[0], ijk[1], ijk[2]};
  nw_volume_voxel_to_world(u, p, out);
  const float *d = u->data + nw_volume_index(u, ijk[0], ijk[1], ijk[2]) * 3;
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++)
      out[r] += u->vox_to_ras[r * 4 + c] * d[c];
}

static double map_distance(const double a[16], const double b[16], const double x[3])
{
  double d2 = 0.0;
  for (int r = 0; r < 3; r++) {
    double ya = a[r * 4 + 3], yb = b[r * 4 + 3];
    for (int c = 0; c < 3; c++) {
      ya += a[r * 4 + c] * x[c];
      yb += b[r * 4 + c] * x[c];
    }
    d2 += (ya - yb) * (ya - yb);
  }
  return sqrt(d2);
}

static void check_saved(NwRun *run, const double *found)
{
  g_autofree char *prefix = nw_test_path("grids");
  g_autoptr(GPtrArray) written = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_run_save_results(run, prefix, written, &error));
  g_assert_no_error(error);
  static const char *const want[] = {"_affine.txt", "_affine.mat", "_fsl.mat", "_warped.nii.gz",
                                     "_forward.nii.gz", "_inverse.nii.gz", "_labels.nii.gz"};
  for (gsize i = 0; i < G_N_ELEMENTS(want); i++) {
    g_autofree char *path = g_strconcat(prefix, want[i], NULL);
    g_assert_true(g_file_test(path, G_FILE_TEST_IS_REGULAR));
  }
  g_autofree char *txt = g_strconcat(prefix, "_affine.txt", NULL);
  double back[16];
  g_assert_true(nw_transform_read(txt, NULL, NULL, back, &error));
  g_assert_no_error(error);
  for (int e = 0; e < 16; e++)
    g_assert_cmpfloat_with_epsilon(back[e], found[e], 1e-6);
}

/* data: the device, NW_DEVICE_CPU or NW_DEVICE_CUDA (skipped where no GPU answers). */
static void test_affine_demons(gconstpointer data)
{
  const NwDevice device = GPOINTER_TO_INT(data);
  double t[16];
  true_transform(t);
  Rig rig = {0};
  rig_init(&rig, t);
  const NwMethodOps *ops = nw_method_lookup("affine-demons", device, NULL);
  if (device == NW_DEVICE_CUDA && (ops == NULL || !nw_method_cuda_available(NULL, 0))) {
    rig_clear(&rig);
    g_test_skip("no CUDA device");
    return;
  }
  g_assert_nonnull(ops);
  g_autoptr(NwParams) p = nw_params_new(ops->params, ops->n_params);
  g_assert_true(nw_params_set_string(p, "affine-transform", "similarity", NULL));
  g_assert_true(nw_params_set(p, "affine-levels", 2, NULL));
  g_assert_true(nw_params_set(p, "levels", 2, NULL));
  g_assert_true(nw_params_set(p, "iterations", 30, NULL));
  run_to_end(&rig, ops, p);

  const NwMethodResult *res = nw_run_get_result(rig.run);
  const double *found = nw_method_result_get_values(res, "transform", NULL);
  const double *before = nw_method_result_get_values(res, "before", NULL);
  g_assert_nonnull(found);
  g_assert_nonnull(before);
  /* the transform: within one fixed voxel (2 mm) of T over the head, much better in fact */
  double worst = 0.0;
  for (int c = 0; c < 8; c++) {
    const double x[3] = {c & 1 ? 18 : -18, c & 2 ? 15 : -15, c & 4 ? 14 : -14};
    worst = MAX(worst, map_distance(found, t, x));
  }
  g_test_message("transform: worst distance to T over the head %.3f mm", worst);
  g_assert_cmpfloat(worst, <, 1.0);

  const NwVolume *fixed = nw_layer_get_volume(rig.layers[0]);
  const NwVolume *fixed_labels = nw_layer_get_volume(rig.layers[2]);
  const NwVolume *warped = nw_method_result_get(res, "warped");
  const NwVolume *labels = nw_method_result_get(res, "labels");
  g_assert_true(nw_volume_same_grid(warped, fixed));
  g_assert_true(nw_volume_same_grid(labels, fixed));
  double mse, ncc;
  nw_image_similarity(fixed, warped, &mse, &ncc);
  /* the affine alone, for comparison: the moving labels through the transform found */
  g_autoptr(NwVolume) affine_labels = nw_affine_resample(
      nw_layer_get_volume(rig.layers[3]), fixed, found, 3, NW_SAMPLER_NEAREST, 0.0f, NULL);
  const double dice = mean_dice(fixed_labels, labels);
  const double dice_affine = mean_dice(fixed_labels, affine_labels);
  g_test_message("NCC %.4f -> %.4f, Dice %.3f -> %.3f (affine alone %.3f)", before[1], ncc,
                 before[2], dice, dice_affine);
  g_assert_cmpfloat(ncc, >, 0.97);
  g_assert_cmpfloat(ncc, >, before[1] + 0.2);
  g_assert_cmpfloat(dice, >, 0.85);
  g_assert_cmpfloat(dice, >, before[2] + 0.2);
  g_assert_cmpfloat(dice, >=, dice_affine - 0.005); /* demons did not undo the affine's work */
  double run_mse, run_ncc;
  nw_run_get_before(rig.run, &run_mse, &run_ncc);
  g_assert_cmpfloat(run_ncc, ==, before[1]);
  /* both stages ran, their levels in one count: the affine stage's 2, then demons' 2 */
  int counts[NW_RUN_MAX_LEVELS];
  g_assert_cmpint(nw_run_get_level_iterations(rig.run, counts), ==, 4);
  for (int l = 0; l < 4; l++)
    g_assert_cmpint(counts[l], >, 0);

  /* the forward field maps fixed -> ORIGINAL moving: away from the bump, x + U(x) = T x */
  const NwVolume *u = nw_method_result_get(res, "forward");
  const int probes[3][3] = {{25, 11, 20}, {20, 20, 10}, {12, 24, 14}};
  for (int i = 0; i < 3; i++) {
    double x[3], y[3];
    const double p[3] = {probes[i][0], probes[i][1], probes[i][2]};
    nw_volume_voxel_to_world(u, p, x);
    field_target(u, probes[i], y);
    const double id[16] = {1, 0, 0, y[0], 0, 1, 0, y[1], 0, 0, 1, y[2], 0, 0, 0, 1};
    const double zero[3] = {0, 0, 0};
    double tx[16];
    memcpy(tx, t, sizeof tx);
    for (int r = 0; r < 3; r++) /* |T x - y| as the distance of two maps at 0 */
      tx[r * 4 + 3] = t[r * 4 + 0] * x[0] + t[r * 4 + 1] * x[1] + t[r * 4 + 2] * x[2] + t[r * 4 + 3];
    const double err = map_distance(tx, id, zero);
    g_test_message("forward field at (%g, %g, %g) mm: %.3f mm from T x", x[0], x[1], x[2], err);
    g_assert_cmpfloat(err, <, 1.0);
  }
  check_saved(rig.run, found);
  rig_clear(&rig);
}

static void test_demons_other_grid(void)
{
  /* the same anatomy in scanner coordinates, a few mm apart: T a small shift */
  const double t[16] = {1, 0, 0, 1.5, 0, 1, 0, -1.0, 0, 0, 1, 0.5, 0, 0, 0, 1};
  Rig rig = {0};
  rig_init(&rig, t);
  const NwMethodOps *ops = nw_method_lookup("demons", NW_DEVICE_CPU, NULL);
  g_autoptr(NwParams) p = nw_params_new(ops->params, ops->n_params);
  g_assert_true(nw_params_set(p, "levels", 2, NULL));
  g_assert_true(nw_params_set(p, "iterations", 30, NULL));
  run_to_end(&rig, ops, p);
  const NwMethodResult *res = nw_run_get_result(rig.run);
  const NwVolume *fixed = nw_layer_get_volume(rig.layers[0]);
  const NwVolume *warped = nw_method_result_get(res, "warped");
  const NwVolume *inverse = nw_method_result_get(res, "inverse");
  g_assert_true(nw_volume_same_grid(warped, fixed));
  /* the inverse maps the original moving grid back (regrid.h) */
  g_assert_true(nw_volume_same_grid(inverse, nw_layer_get_volume(rig.layers[1])));
  double mse, ncc, before_mse, before_ncc;
  nw_image_similarity(fixed, warped, &mse, &ncc);
  nw_run_get_before(rig.run, &before_mse, &before_ncc);
  g_test_message("NCC %.4f -> %.4f, MSE %.2f -> %.2f", before_ncc, ncc, before_mse, mse);
  g_assert_true(isfinite(before_ncc));
  g_assert_cmpfloat(ncc, >, before_ncc + 0.02);
  g_assert_cmpfloat(mse, <, 0.5 * before_mse);
  const double dice = mean_dice(nw_layer_get_volume(rig.layers[2]),
                                nw_method_result_get(res, "labels"));
  g_assert_cmpfloat(dice, >, nw_method_result_get_values(res, "before", NULL)[2]);
  rig_clear(&rig);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_data_func("/scene-run-grids/affine-demons", GINT_TO_POINTER(NW_DEVICE_CPU),
                       test_affine_demons);
  g_test_add_data_func("/scene-run-grids/affine-demons-cuda", GINT_TO_POINTER(NW_DEVICE_CUDA),
                       test_affine_demons);
  g_test_add_func("/scene-run-grids/demons-other-grid", test_demons_other_grid);
  return g_test_run();
}
