/* test_affine_rows_walk.cu — the host half of the affine cost's rows variants
 * (cuda/affine_cost_rows_cuda.cuh), which needs no device: over every thread of a launch, the
 * walk over groups of K voxels visits each group of the fixed image exactly once, with its
 * row (j, k), its place gi and its first voxel e consistent, for K 2 and 4, 2D and 3D, rows of
 * 1 to 1024 voxels (narrower than a group, odd, a multiple of K), and strides from one thread
 * to more threads than groups; and the form (flat, whole) follows the grid and the codes'
 * alignment. The device half is compared with the one-voxel kernel in test_cuda_affine_cost.
 * Main thread; a second. */
#include <stdio.h>

#include <vector>

#include "affine_cost_rows_cuda.cuh"

/* Walks every thread t < stride of a launch over an nx x ny x nz image; false (and a message)
 * where a group is out of place or not visited exactly once. */
template <int K, bool FLAT>
static bool walk_covers(unsigned int nx, unsigned int ny, unsigned int nz, unsigned int stride)
{
  const int k[2] = {K, K};
  const NwRowsForm f = nw_rows_form(k, (int)nx, (int)nz, (int)nz, nullptr);
  g_assert_true(f.flat == FLAT && f.k == K);
  const NwRowsGrid g = nw_rows_grid(f, nx, ny, stride);
  std::vector<int> seen(nw_rows_threads(f, (int)nx, (int)ny, (int)nz), 0);
  const unsigned int n = nx * ny * nz;
  for (unsigned int t = 0; t < stride; t++)
    for (NwRowsWalk<K, FLAT> v(g, t, nx, ny); v.e < n; v.step(g, ny)) {
      if (v.gi >= g.groups || v.j >= ny || v.k >= nz || v.e != (v.k * ny + v.j) * nx + v.gi * K) {
        fprintf(stderr, "K %d, %u x %u x %u, stride %u: thread %u at gi %u j %u k %u e %u\n", K, nx,
                ny, nz, stride, t, v.gi, v.j, v.k, v.e);
        return false;
      }
      seen[((size_t)v.k * ny + v.j) * g.groups + v.gi]++;
    }
  for (size_t i = 0; i < seen.size(); i++)
    if (seen[i] != 1) {
      fprintf(stderr, "K %d, %u x %u x %u, stride %u: group %zu visited %d times\n", K, nx, ny, nz,
              stride, i, seen[i]);
      return false;
    }
  return true;
}

static void test_walk(void)
{
  static const unsigned int nxs[] = {1, 2, 3, 4, 5, 7, 13, 91, 182, 1023, 1024};
  static const unsigned int nys[] = {1, 2, 7, 109};
  static const unsigned int nzs[] = {2, 5, 37};
  static const unsigned int strides[] = {1, 3, 256, 768, 5120};
  int walks = 0;
  for (unsigned int nx : nxs)
    for (unsigned int ny : nys)
      for (unsigned int stride : strides) {
        g_assert_true((walk_covers<2, true>(nx, ny, 1, stride)));
        g_assert_true((walk_covers<4, true>(nx, ny, 1, stride)));
        walks += 2;
        for (unsigned int nz : nzs) {
          if ((size_t)nx * ny * nz > 400000)
            continue;
          g_assert_true((walk_covers<2, false>(nx, ny, nz, stride)));
          g_assert_true((walk_covers<4, false>(nx, ny, nz, stride)));
          walks += 2;
        }
      }
  g_assert_cmpint(walks, >, 500);
}

/* Whole: K divides the rows and the codes start on a 2K-byte boundary. 3D: K = k[0]. */
static void test_form(void)
{
  const int k[2] = {2, 4};
  alignas(16) static const uint16_t codes[16] = {0};
  NwRowsForm f = nw_rows_form(k, 1024, 1, 1, codes);
  g_assert_true(f.flat && f.whole && f.k == 4);
  f = nw_rows_form(k, 1022, 1, 1, codes);
  g_assert_true(f.flat && !f.whole);
  f = nw_rows_form(k, 1024, 1, 1, codes + 2); /* 4-byte aligned, not 8 */
  g_assert_true(!f.whole);
  f = nw_rows_form(k, 182, 218, 182, codes);
  g_assert_true(!f.flat && f.whole && f.k == 2);
  f = nw_rows_form(k, 91, 109, 91, codes);
  g_assert_true(!f.flat && !f.whole);
  f = nw_rows_form(k, 64, 1, 3, codes); /* a one-slice fixed image, a moving volume: 3D */
  g_assert_true(!f.flat && f.k == 2);
  g_assert_cmpuint(nw_rows_threads(nw_rows_form(k, 1023, 1, 1, codes), 1023, 517, 1), ==,
                   256u * 517u);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/affine/rows-walk", test_walk);
  g_test_add_func("/affine/rows-form", test_form);
  return g_test_run();
}
