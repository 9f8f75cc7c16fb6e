/* testutil.c — see testutil.h. */
#include "testutil.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "method.h"
#include "method_table.h"

static char *tmpdir;

static void remove_tree(const char *path)
{
  GDir *d = g_dir_open(path, 0, NULL);
  if (d != NULL) {
    const char *name;
    while ((name = g_dir_read_name(d)) != NULL) {
      g_autofree char *child = g_build_filename(path, name, NULL);
      if (g_file_test(child, G_FILE_TEST_IS_DIR) && !g_file_test(child, G_FILE_TEST_IS_SYMLINK))
        remove_tree(child);
      else
        g_unlink(child);
    }
    g_dir_close(d);
  }
  g_rmdir(path);
}

static void cleanup_tmpdir(void)
{
  if (tmpdir != NULL && g_getenv("NW_TEST_KEEP") == NULL)
    remove_tree(tmpdir);
}

const char *nw_test_tmpdir(void)
{
  if (tmpdir == NULL) {
    tmpdir = g_dir_make_tmp("nwtest-XXXXXX", NULL);
    g_assert_nonnull(tmpdir);
    atexit(cleanup_tmpdir);
  }
  return tmpdir;
}

char *nw_test_path(const char *name)
{
  return g_build_filename(nw_test_tmpdir(), name, NULL);
}

NwVolume *nw_test_volume(int nx, int ny, int nz, int nc, guint32 seed)
{
  NwVolume *v = nw_volume_new(nx, ny, nz, nc, NULL);
  g_assert_nonnull(v);
  GRand *r = g_rand_new_with_seed(seed);
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++)
        for (int c = 0; c < nc; c++) {
          double s = sin(0.3 * i + 0.1 * c) * cos(0.2 * j) + 0.5 * sin(0.15 * k + 1.0);
          double edge = (i > nx / 2) ? 1.0 : 0.0;
          v->data[nw_volume_index(v, i, j, k) * nc + c] =
              (float)(100.0 + 40.0 * s + 30.0 * edge + g_rand_double_range(r, -1.0, 1.0));
        }
  g_rand_free(r);
  return v;
}

NwVolume *nw_test_smooth_velocity(int n, double peak, double width_div, double ky, double kz)
{
  NwVolume *v = nw_volume_new(n, n, n, 3, NULL);
  g_assert_nonnull(v);
  const double c = (n - 1) / 2.0, s = n / width_div;
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        double x = i - c, y = j - c, z = k - c;
        double g = exp(-(x * x + y * y + z * z) / (2 * s * s));
        float *p = v->data + 3 * nw_volume_index(v, i, j, k);
        p[0] = (float)(peak * g * sin(ky * y + 0.5));
        p[1] = (float)(peak * g * cos(kz * z));
        p[2] = (float)(peak * g * sin(0.15 * x + 0.1 * y));
      }
  return v;
}

double nw_test_max_abs_diff(const NwVolume *a, const NwVolume *b)
{
  g_assert_cmpuint(nw_volume_n_floats(a), ==, nw_volume_n_floats(b));
  double m = 0.0;
  for (size_t e = 0; e < nw_volume_n_floats(a); e++) {
    double d = fabs((double)a->data[e] - (double)b->data[e]);
    if (isnan(d))
      return INFINITY;
    m = d > m ? d : m;
  }
  return m;
}

gboolean nw_test_small_cases(void)
{
  const char *small = g_getenv("NW_TEST_SMALL");
  return small != NULL && *small != '\0';
}

gboolean nw_test_have_cuda(void)
{
  nw_methods_register_builtin();
  char why[256];
  if (nw_method_cuda_available(why, sizeof why))
    return TRUE;
  printf("SKIP: no CUDA device (%s)\n", why);
  return FALSE;
}

double nw_test_figure(const NwIterationReport *r, const char *name)
{
  for (int f = 0; f < r->n_figures; f++)
    if (g_strcmp0(r->figure_names[f], name) == 0)
      return r->figures[f];
  g_error("report has no figure '%s'", name);
  return NAN;
}

NwParams *nw_test_params(const NwParamSpec *specs, int n, const char *const *settings)
{
  NwParams *p = nw_params_new(specs, n);
  for (; settings != NULL && *settings != NULL; settings++) {
    g_autoptr(GError) err = NULL;
    g_assert_true(nw_params_set_string(p, NULL, *settings, &err));
    g_assert_no_error(err);
  }
  return p;
}

#define COUNTED_MARK 0x434f554e54u /* "COUNT" */
static gint counted_blocks;

static void *counted_alloc(size_t bytes)
{
  guint64 *p = g_malloc(bytes + sizeof(guint64));
  p[0] = COUNTED_MARK;
  g_atomic_int_inc(&counted_blocks);
  return p + 1;
}

static void counted_free(void *memory)
{
  if (memory == NULL)
    return;
  guint64 *p = (guint64 *)memory - 1;
  g_assert_cmphex(p[0], ==, COUNTED_MARK); /* a block of this allocator, not GLib's own */
  g_atomic_int_add(&counted_blocks, -1);
  g_free(p);
}

const NwVoxelAllocator nw_test_counting_allocator = {counted_alloc, counted_free, FALSE};

int nw_test_counted_blocks(void)
{
  return g_atomic_int_get(&counted_blocks);
}
