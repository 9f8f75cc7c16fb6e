/* test_render_field.c — the deformation renderers offscreen: log-Jacobian and magnitude heat
 * maps against analytic fields, folded voxels marked, the warped grid and arrows moved by
 * the field in the vertex shader. Skips (77) without a GL 3.3 core context. */
#include <math.h>

#include "field_renderer.h"
#include "nw_gl.h"
#include "testutil.h"

gboolean nw_test_gl_context(int w, int h, NwGlTarget *target);

enum { W = 80, H = 80 };
static NwGlTarget target;
static NwRenderer *renderer;

static void clear(void)
{
  glBindFramebuffer(GL_FRAMEBUFFER, target.fbo);
  glViewport(0, 0, W, H);
  glClearColor(0.0f, 0.0f, 0.0f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
}

static const guint8 *px(const guint8 *img, int x, int y)
{
  return img + ((size_t)y * W + x) * 4;
}

/* 33 x 33 x 1 field, 1 mm, u(i, j) = (a (i - 16) + cx, cy, 0) voxels. */
static NwVolume *linear_field(double a, double cx, double cy)
{
  NwVolume *u = nw_volume_new(33, 33, 1, 3, NULL);
  for (int j = 0; j < 33; j++)
    for (int i = 0; i < 33; i++) {
      float *d = u->data + nw_volume_index(u, i, j, 0) * 3;
      d[0] = (float)(a * (i - 16) + cx);
      d[1] = (float)cy;
      d[2] = 0.0f;
    }
  return u;
}

/* Pixel centres land on whole millimetres: px = 40 + 2 (X - 16.25) = 2X + 7.5. */
static NwSliceGeometry geometry(void)
{
  NwSliceGeometry g = {.plane = NW_PLANE_AXIAL,
                       .center_ras = {16.25, 16.25, 0},
                       .mm_per_pixel = 0.5,
                       .width = W,
                       .height = H};
  return g;
}

static guint8 *heat(const NwVolume *u, NwFieldHeat kind, const NwLayerStyle *st)
{
  NwGlVolume *f = nw_gl_volume_new(u, FALSE, NULL);
  NwSliceGeometry g = geometry();
  double mvp[16];
  float quad[12];
  nw_slice_geometry_mvp(&g, mvp);
  nw_slice_geometry_quad(&g, quad);
  clear();
  nw_render_field_heat(renderer, mvp, quad, f, kind, st);
  nw_gl_volume_free(f);
  return nw_gl_read_rgba(0, 0, W, H);
}

static void expect_lut(const guint8 *p, NwColormap map, double t)
{
  guint8 lut[NW_LUT_SIZE * 4];
  nw_colormap_fill(map, lut);
  double e = t * 255.0;
  int k = (int)floor(e);
  double f = e - k;
  for (int c = 0; c < 3; c++) {
    double want = (1 - f) * lut[k * 4 + c] + f * lut[MIN(k + 1, 255) * 4 + c];
    g_assert_cmpfloat(fabs(p[c] - want), <=, 3.0);
  }
}

static void test_log_jacobian(void)
{
  /* det(I + grad u) = 1 + a everywhere inside */
  g_autoptr(NwVolume) u = linear_field(0.5, 0.0, 0.0);
  NwLayerStyle st = {NW_COLORMAP_DIVERGING, -1.0f, 1.0f, 1.0f, FALSE, FALSE};
  g_autofree guint8 *img = heat(u, NW_FIELD_HEAT_LOG_JACOBIAN, &st);
  expect_lut(px(img, 40, 40), NW_COLORMAP_DIVERGING, (log(1.5) + 1.0) / 2.0);
  expect_lut(px(img, 20, 60), NW_COLORMAP_DIVERGING, (log(1.5) + 1.0) / 2.0);
}

static void test_folds_marked(void)
{
  g_autoptr(NwVolume) u = linear_field(-2.0, 0.0, 0.0); /* det = -1: folded everywhere */
  NwLayerStyle st = {NW_COLORMAP_DIVERGING, -1.0f, 1.0f, 1.0f, FALSE, FALSE};
  g_autofree guint8 *img = heat(u, NW_FIELD_HEAT_LOG_JACOBIAN, &st);
  int n_fold = 0, n_black = 0;
  for (int y = 30; y < 50; y++)
    for (int x = 30; x < 50; x++) {
      const guint8 *p = px(img, x, y);
      if (p[0] == 0 && p[1] == 255 && abs(p[2] - 77) <= 1)
        n_fold++;
      else if (p[0] == 0 && p[1] == 0 && p[2] == 0)
        n_black++;
    }
  /* hatched: half fold colour, half black */
  g_assert_cmpint(n_fold + n_black, ==, 400);
  g_assert_cmpint(n_fold, >, 180);
  g_assert_cmpint(n_black, >, 180);
}

static void test_magnitude(void)
{
  g_autoptr(NwVolume) u = linear_field(0.0, 3.0, 4.0); /* |u| = 5 mm */
  NwLayerStyle st = {NW_COLORMAP_HOT, 0.0f, 10.0f, 1.0f, FALSE, FALSE};
  g_autofree guint8 *img = heat(u, NW_FIELD_HEAT_MAGNITUDE, &st);
  expect_lut(px(img, 40, 40), NW_COLORMAP_HOT, 0.5);
}

static guint8 *lines(const NwVolume *u, gboolean arrows, int k)
{
  NwGlVolume *f = nw_gl_volume_new(u, FALSE, NULL);
  NwSliceGeometry g = geometry();
  const float white[4] = {1, 1, 1, 1};
  clear();
  if (arrows)
    nw_render_field_arrows(renderer, &g, f, k, 1.0f, 0.1f, white);
  else
    nw_render_field_grid(renderer, &g, f, k, 1.0f, white);
  nw_gl_volume_free(f);
  return nw_gl_read_rgba(0, 0, W, H);
}

/* world X (mm) -> pixel column, world Y -> pixel row, for geometry() */
static int col(double x)
{
  return (int)floor(2.0 * x + 7.5);
}
static int row(double y)
{
  return (int)floor(72.5 - 2.0 * y);
}

static void test_warped_grid(void)
{
  g_autoptr(NwVolume) still = linear_field(0.0, 0.0, 0.0);
  g_autofree guint8 *a = lines(still, FALSE, 4);
  /* vertical lines at X = 0, 4, 8, ...; between horizontal lines (Y = 15 is not one) */
  g_assert_cmpuint(px(a, col(8), row(15))[0], ==, 255);
  g_assert_cmpuint(px(a, col(10), row(15))[0], ==, 0);
  g_assert_cmpuint(px(a, col(10), row(16))[0], ==, 255); /* horizontal line Y = 16 */
  g_autoptr(NwVolume) shifted = linear_field(0.0, 2.0, 0.0);
  g_autofree guint8 *b = lines(shifted, FALSE, 4);
  /* every vertex moved +2 mm in x */
  g_assert_cmpuint(px(b, col(10), row(15))[0], ==, 255);
  g_assert_cmpuint(px(b, col(8), row(15))[0], ==, 0);
  g_assert_cmpuint(px(b, col(13), row(16))[0], ==, 255);
}

static void test_arrows(void)
{
  g_autoptr(NwVolume) u = linear_field(0.0, 4.0, 0.0);
  g_autofree guint8 *img = lines(u, TRUE, 8);
  /* arrow from (8, 8) to (12, 8): shaft lit, nothing 3 mm above it or before its tail */
  g_assert_cmpuint(px(img, col(10), row(8))[0], ==, 255);
  g_assert_cmpuint(px(img, col(10), row(11))[0], ==, 0);
  g_assert_cmpuint(px(img, col(6.5), row(8))[0], ==, 0);
  /* too short to draw with a 5 mm threshold */
  NwGlVolume *f = nw_gl_volume_new(u, FALSE, NULL);
  NwSliceGeometry g = geometry();
  const float white[4] = {1, 1, 1, 1};
  clear();
  nw_render_field_arrows(renderer, &g, f, 8, 1.0f, 5.0f, white);
  nw_gl_volume_free(f);
  g_autofree guint8 *none = nw_gl_read_rgba(0, 0, W, H);
  g_assert_cmpuint(px(none, col(10), row(8))[0], ==, 0);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  if (!nw_test_gl_context(W, H, &target))
    return NW_TEST_SKIP;
  g_autoptr(GError) error = NULL;
  renderer = nw_renderer_new(&error);
  g_assert_no_error(error);
  g_test_add_func("/render-field/log-jacobian", test_log_jacobian);
  g_test_add_func("/render-field/folds-marked", test_folds_marked);
  g_test_add_func("/render-field/magnitude", test_magnitude);
  g_test_add_func("/render-field/warped-grid", test_warped_grid);
  g_test_add_func("/render-field/arrows", test_arrows);
  int rc = g_test_run();
  nw_renderer_free(renderer);
  nw_gl_target_clear(&target);
  return rc;
}
