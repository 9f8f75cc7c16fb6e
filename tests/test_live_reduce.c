/* test_live_reduce.c — the block-mean reduction of live host frames (core/live_reduce.h):
 * the factor chosen for a voxel budget, reduced voxel centres at the world position of their
 * block's centre, block means of images, and fields in reduced voxels that are the same
 * displacement in millimetres. */
#include <math.h>

#include "live_reduce.h"
#include "testutil.h"

static void test_choose(void)
{
  g_assert_cmpint(nw_live_reduce_choose(91, 109, 91, NW_LIVE_HOST_MAX_VOXELS), ==, 1);
  g_assert_cmpint(nw_live_reduce_choose(181, 217, 181, NW_LIVE_HOST_MAX_VOXELS), ==, 2);
  g_assert_cmpint(nw_live_reduce_choose(256, 256, 256, NW_LIVE_HOST_MAX_VOXELS), ==, 3);
  g_assert_cmpint(nw_live_reduce_choose(512, 512, 512, NW_LIVE_HOST_MAX_VOXELS), ==, 6);
  g_assert_cmpint(nw_live_reduce_choose(256, 256, 256, (size_t)1 << 21), ==, 2);
  /* a 2D image: its one slice stays */
  g_assert_cmpint(nw_live_reduce_choose(4096, 4096, 1, NW_LIVE_HOST_MAX_VOXELS), ==, 4);
  g_assert_cmpint(nw_live_reduce_choose(3, 3, 3, 1), ==, 2);
}

/* An oblique affine: the centre of reduced voxel c is the mean of its block's fine centres. */
static void test_geometry(void)
{
  g_autoptr(NwVolume) v = nw_volume_new(11, 8, 5, 1, NULL);
  const double a[16] = {0.9, 0.2, 0, -30, -0.1, 1.1, 0.3, 12, 0.05, 0, 1.7, 4, 0, 0, 0, 1};
  nw_volume_set_affine(v, a);
  g_autoptr(NwVolume) r = nw_live_reduce(v, 3, FALSE, NULL);
  g_assert_cmpint(r->nx, ==, 3);
  g_assert_cmpint(r->ny, ==, 2);
  g_assert_cmpint(r->nz, ==, 1);
  for (int k = 0; k < r->nz; k++)
    for (int j = 0; j < r->ny; j++)
      for (int i = 0; i < r->nx; i++) {
        double c[3] = {i, j, k}, got[3], want[3] = {0, 0, 0};
        nw_volume_voxel_to_world(r, c, got);
        for (int dz = 0; dz < 3; dz++)
          for (int dy = 0; dy < 3; dy++)
            for (int dx = 0; dx < 3; dx++) {
              double f[3] = {3 * i + dx, 3 * j + dy, 3 * k + dz}, w[3];
              nw_volume_voxel_to_world(v, f, w);
              for (int d = 0; d < 3; d++)
                want[d] += w[d] / 27.0;
            }
        for (int d = 0; d < 3; d++)
          g_assert_cmpfloat(fabs(got[d] - want[d]), <, 1e-9);
      }
  g_assert_cmpfloat(fabs(r->spacing_mm[2] - 3 * v->spacing_mm[2]), <, 1e-5);
}

/* Means of each block, per component; fields divided by the factor per axis. */
static void test_means(void)
{
  g_autoptr(NwVolume) img = nw_volume_new(6, 4, 4, 1, NULL);
  g_autoptr(NwVolume) u = nw_volume_new(6, 4, 4, 3, NULL);
  for (int k = 0; k < 4; k++)
    for (int j = 0; j < 4; j++)
      for (int i = 0; i < 6; i++) {
        const size_t at = nw_volume_index(img, i, j, k);
        img->data[at] = (float)(i + 10 * j + 100 * k);
        u->data[at * 3] = 2.0f, u->data[at * 3 + 1] = (float)j, u->data[at * 3 + 2] = -4.0f;
      }
  g_autoptr(NwVolume) ri = nw_live_reduce(img, 2, FALSE, NULL);
  g_autoptr(NwVolume) ru = nw_live_reduce(u, 2, TRUE, NULL);
  for (int k = 0; k < 2; k++)
    for (int j = 0; j < 2; j++)
      for (int i = 0; i < 3; i++) {
        const size_t at = nw_volume_index(ri, i, j, k);
        /* mean of i over {2i, 2i+1} is 2i + 0.5; likewise for j and k */
        g_assert_cmpfloat(ri->data[at], ==, (float)(2 * i + 0.5 + 10 * (2 * j + 0.5) + 100 * (2 * k + 0.5)));
        g_assert_cmpfloat(ru->data[at * 3], ==, 1.0f);
        g_assert_cmpfloat(ru->data[at * 3 + 1], ==, (float)((2 * j + 0.5) / 2.0));
        g_assert_cmpfloat(ru->data[at * 3 + 2], ==, -2.0f);
      }
  g_autoptr(NwVolume) same = nw_live_reduce(img, 1, FALSE, NULL);
  g_assert_cmpint(same->nx, ==, 6);
  g_assert_cmpfloat(same->data[17], ==, img->data[17]);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/live-reduce/choose", test_choose);
  g_test_add_func("/live-reduce/geometry", test_geometry);
  g_test_add_func("/live-reduce/means", test_means);
  return g_test_run();
}
