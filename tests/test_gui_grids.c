/* test_gui_grids.c — the application under X with a pair on different grids (issue 11): the
 * demo's fixed image on a 4 mm RAS grid and its moving image on a 5 mm LAS grid with another
 * size and origin (the same anatomy in scanner coordinates). The Run page lists
 * "affine-demons"; it runs to the end on the pair without the "one grid" refusal and saves
 * PREFIX_affine.txt beside the fields; plain demons runs on the pair too (the job resamples
 * the moving image on its worker). Test process main thread; the application is a child. */
#include <string.h>

#include "affine_resample.h"
#include "demo.h"
#include "gui_testutil.h"
#include "io_nifti.h"
#include "testutil.h"

/* image resampled (identity world map) onto an empty grid of n voxels with affine aff. */
static void write_on_grid(const NwVolume *image, const int n[3], const double aff[16],
                          const char *name)
{
  g_autoptr(NwVolume) grid = nw_volume_new(n[0], n[1], n[2], 1, NULL);
  nw_volume_set_affine(grid, aff);
  const double id[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  g_autoptr(GError) error = NULL;
  g_autoptr(NwVolume) v = nw_affine_resample(image, grid, id, 3, NW_SAMPLER_LINEAR, 0.0f, &error);
  g_assert_no_error(error);
  g_autofree char *path = nw_test_path(name);
  g_assert_true(nw_nifti_write(path, v, NW_DT_FLOAT32, FALSE, &error));
  g_assert_no_error(error);
}

static void write_pair(void)
{
  NwDemoOptions opt;
  nw_demo_options_init(&opt);
  NwDemoCase c = {0};
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_demo_make(&opt, 2.0, &c, &error));
  g_assert_no_error(error);
  /* the demo's world box, from its affine: fixed covers it at 4 mm, moving at 5 mm, LAS */
  double lo[3] = {G_MAXDOUBLE, G_MAXDOUBLE, G_MAXDOUBLE}, hi[3] = {-G_MAXDOUBLE, -G_MAXDOUBLE,
                                                                   -G_MAXDOUBLE};
  for (int corner = 0; corner < 8; corner++) {
    const double ijk[3] = {corner & 1 ? c.fixed->nx - 1 : 0, corner & 2 ? c.fixed->ny - 1 : 0,
                           corner & 4 ? c.fixed->nz - 1 : 0};
    double x[3];
    nw_volume_voxel_to_world(c.fixed, ijk, x);
    for (int a = 0; a < 3; a++) {
      lo[a] = MIN(lo[a], x[a]);
      hi[a] = MAX(hi[a], x[a]);
    }
  }
  const int nf[3] = {(int)((hi[0] - lo[0]) / 4) + 1, (int)((hi[1] - lo[1]) / 4) + 1,
                     (int)((hi[2] - lo[2]) / 4) + 1};
  const double af[16] = {4, 0, 0, lo[0], 0, 4, 0, lo[1], 0, 0, 4, lo[2], 0, 0, 0, 1};
  const int nm[3] = {(int)((hi[0] - lo[0]) / 5) + 3, (int)((hi[1] - lo[1]) / 5) + 1,
                     (int)((hi[2] - lo[2]) / 5) + 2};
  const double am[16] = {-5, 0, 0, hi[0] + 6, 0, 5, 0, lo[1] - 2, 0, 0, 5, lo[2] - 4, 0, 0, 0, 1};
  write_on_grid(c.fixed, nf, af, "grid_fixed.nii.gz");
  write_on_grid(c.moving, nm, am, "grid_moving.nii.gz");
  nw_demo_case_clear(&c);
}

static void test_run_grids(void)
{
  write_pair();
  g_autofree char *fixed = nw_test_path("grid_fixed.nii.gz");
  g_autofree char *moving = nw_test_path("grid_moving.nii.gz");
  g_autofree char *dir = g_strdup(nw_test_tmpdir());
  g_autofree char *text = g_strdup_printf(
      "open %s\nopen %s\nmethod affine-demons\ndevice cpu\nparam affine-transform rigid\n"
      "param affine-levels 2\nparam levels 1\nparam iterations 10\nrun\nwait-state finished\n"
      "run-summary\nsave-results %s/first\nsave-results %s/grids\nmethod demons\n"
      "param levels 1\nparam iterations 5\nrun\nwait-state finished\nrun-summary\n"
      "save-results --overwrite %s/grids\nquit\n",
      fixed, moving, dir, dir, dir);
  g_autofree char *err = NULL;
  g_autofree char *out = nw_gui_run_script("grids.txt", text, 0, &err);
  g_test_message("%s", out);
  g_assert_null(strstr(err, "one grid"));
  g_assert_null(strstr(err, "not in the method picker"));
  /* both runs ended: two summaries that say so */
  const char *first = strstr(out, "run-summary: Finished");
  g_assert_nonnull(first);
  g_assert_nonnull(strstr(first + 1, "run-summary: Finished"));
  static const char *const want[] = {"_affine.txt", "_fsl.mat", "_forward.nii.gz",
                                     "_warped.nii.gz"};
  for (gsize i = 0; i < G_N_ELEMENTS(want); i++) {
    g_autofree char *path = g_strconcat(dir, "/first", want[i], NULL);
    g_assert_true(g_file_test(path, G_FILE_TEST_IS_REGULAR));
  }
  /* the demons result saved over the affine-demons one: the earlier save's transform files
   * are gone (a folder never mixes two runs), the demons files are there */
  static const char *const stale[] = {"_affine.txt", "_affine.mat", "_fsl.mat"};
  for (gsize i = 0; i < G_N_ELEMENTS(stale); i++) {
    g_autofree char *path = g_strconcat(dir, "/grids", stale[i], NULL);
    g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
  }
  g_autofree char *forward = g_strconcat(dir, "/grids_forward.nii.gz", NULL);
  g_assert_true(g_file_test(forward, G_FILE_TEST_IS_REGULAR));
  g_autofree char *txt = NULL;
  g_autofree char *txt_path = g_strconcat(dir, "/first_affine.txt", NULL);
  g_assert_true(g_file_get_contents(txt_path, &txt, NULL, NULL));
  g_assert_true(g_str_has_prefix(txt, "#Insight Transform File V1.0"));
}

int main(int argc, char **argv)
{
  if (!nw_gui_test_init(&argc, &argv))
    return NW_TEST_SKIP;
  g_test_add_func("/gui/run-grids", test_run_grids);
  return g_test_run();
}
