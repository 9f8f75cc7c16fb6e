/* test_render.c — render/ without a window: colour maps, view geometry and the slice,
 * compare and mesh renderers drawn offscreen (EGL, Mesa software GL) and checked pixel by
 * pixel against what the inputs say. Skips (77) where no GL 3.3 core context can be had. */
#include <math.h>
#include <string.h>

#include "mesh_renderer.h"
#include "nw_gl.h"
#include "nw_mat4.h"
#include "renderer.h"
#include "testutil.h"
#include "view_geometry.h"

gboolean nw_test_gl_context(int w, int h, NwGlTarget *target);

enum { W = 64, H = 64 };
static NwGlTarget target;
static NwRenderer *renderer;

static void test_colormaps(void)
{
  guint8 lut[NW_LUT_SIZE * 4];
  nw_colormap_fill(NW_COLORMAP_GREY, lut);
  g_assert_cmpuint(lut[0], ==, 0);
  g_assert_cmpuint(lut[255 * 4 + 1], ==, 255);
  g_assert_cmpuint(lut[128 * 4 + 2], ==, 128);
  nw_colormap_fill(NW_COLORMAP_DIVERGING, lut);
  /* white-ish in the middle, blue low, red high */
  g_assert_cmpuint(lut[128 * 4], >, 220);
  g_assert_cmpuint(lut[2], >, lut[0]);
  g_assert_cmpuint(lut[255 * 4], >, lut[255 * 4 + 2]);
  nw_colormap_fill(NW_COLORMAP_LABEL, lut);
  g_assert_cmpuint(lut[3], ==, 0); /* background transparent */
  g_assert_cmpint(nw_colormap_label_index(1), ==, 1);
  g_assert_cmpint(nw_colormap_label_index(256), ==, 1);
  g_assert_cmpint(nw_colormap_label_index(0), ==, 0);
  /* neighbouring labels differ clearly */
  int d = abs(lut[4] - lut[8]) + abs(lut[5] - lut[9]) + abs(lut[6] - lut[10]);
  g_assert_cmpint(d, >, 60);
  NwColormap m;
  g_assert_true(nw_colormap_from_name("turbo", &m));
  g_assert_cmpint(m, ==, NW_COLORMAP_TURBO);
  g_assert_false(nw_colormap_from_name("jet", &m));
}

static void test_geometry(void)
{
  NwSliceGeometry g = {.plane = NW_PLANE_SAGITTAL,
                       .center_ras = {5, -10, 20},
                       .mm_per_pixel = 0.5,
                       .width = 100,
                       .height = 80};
  double ras[3], px, py;
  nw_slice_geometry_pixel_to_world(&g, 70.0, 30.0, ras);
  /* sagittal: right = +y, up = +z, depth x */
  g_assert_cmpfloat_with_epsilon(ras[0], 5.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(ras[1], -10.0 + 20 * 0.5, 1e-12);
  g_assert_cmpfloat_with_epsilon(ras[2], 20.0 + 10 * 0.5, 1e-12);
  nw_slice_geometry_world_to_pixel(&g, ras, &px, &py);
  g_assert_cmpfloat_with_epsilon(px, 70.0, 1e-9);
  g_assert_cmpfloat_with_epsilon(py, 30.0, 1e-9);
  double mvp[16], clip[3];
  nw_slice_geometry_mvp(&g, mvp);
  nw_mat4_apply_point(mvp, ras, clip);
  g_assert_cmpfloat_with_epsilon(clip[0], 70.0 / 50.0 - 1.0, 1e-9);
  g_assert_cmpfloat_with_epsilon(clip[1], 1.0 - 30.0 / 40.0, 1e-9);
  const char *letters[4];
  nw_plane_letters(NW_PLANE_AXIAL, letters);
  g_assert_cmpstr(letters[0], ==, "L");
  g_assert_cmpstr(letters[2], ==, "A");

  double m[16] = {2, 0, 0, 1, 0, 0, -3, 2, 0, 1, 0, 5, 0, 0, 0, 1}, inv[16], id[16];
  g_assert_true(nw_mat4_invert(inv, m));
  nw_mat4_mul(id, m, inv);
  for (int i = 0; i < 16; i++)
    g_assert_cmpfloat_with_epsilon(id[i], (i % 5 == 0) ? 1.0 : 0.0, 1e-12);
}

static void clear(void)
{
  glBindFramebuffer(GL_FRAMEBUFFER, target.fbo);
  glViewport(0, 0, W, H);
  glDisable(GL_DEPTH_TEST);
  glClearColor(0.0f, 0.0f, 0.25f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
}

static const guint8 *px(const guint8 *img, int x, int y)
{
  return img + ((size_t)y * W + x) * 4;
}

/* A 10 x 20 x 3 volume, 2 mm x 1 mm x 2 mm: 0 for i < 5, 100 from i = 5. In world it is a
 * 20 x 20 mm square, so the picture must be square too. */
static NwVolume *halves_volume(void)
{
  NwVolume *v = nw_volume_new(10, 20, 3, 1, NULL);
  nw_volume_set_spacing(v, 2.0, 1.0, 2.0);
  for (int k = 0; k < 3; k++)
    for (int j = 0; j < 20; j++)
      for (int i = 0; i < 10; i++)
        v->data[nw_volume_index(v, i, j, k)] = i < 5 ? 0.0f : 100.0f;
  return v;
}

static NwSliceGeometry axial_fit(const NwVolume *v, double depth)
{
  NwSliceGeometry g = {.plane = NW_PLANE_AXIAL, .width = W, .height = H};
  double lo[3], hi[3];
  nw_volume_world_bounds(v, lo, hi);
  nw_slice_geometry_fit(&g, lo, hi);
  g.center_ras[2] = depth;
  return g;
}

/* The voxel under pixel (x, y) of g, in v's index space. */
static void pixel_voxel(const NwSliceGeometry *g, const NwVolume *v, int x, int y, double ijk[3])
{
  double ras[3];
  nw_slice_geometry_pixel_to_world(g, x + 0.5, y + 0.5, ras);
  nw_volume_world_to_voxel(v, ras, ijk);
}

static void test_slice_grey_and_aspect(void)
{
  g_autoptr(NwVolume) v = halves_volume();
  g_autoptr(GError) error = NULL;
  NwGlVolume *gv = nw_gl_volume_new(v, FALSE, &error);
  g_assert_no_error(error);
  NwSliceGeometry g = axial_fit(v, 2.0);
  double mvp[16];
  float quad[12];
  nw_slice_geometry_mvp(&g, mvp);
  nw_slice_geometry_quad(&g, quad);
  NwLayerStyle st = {NW_COLORMAP_GREY, 0.0f, 100.0f, 1.0f, FALSE, FALSE};
  clear();
  nw_render_slice_layer(renderer, mvp, quad, gv, &st);
  g_autofree guint8 *img = nw_gl_read_rgba(0, 0, W, H);
  int n_black = 0, n_white = 0, n_outside = 0;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      double ijk[3];
      pixel_voxel(&g, v, x, y, ijk);
      const guint8 *p = px(img, x, y);
      gboolean in = ijk[0] > -0.45 && ijk[0] < 9.45 && ijk[1] > -0.45 && ijk[1] < 19.45;
      gboolean out = ijk[0] < -0.55 || ijk[0] > 9.55 || ijk[1] < -0.55 || ijk[1] > 19.55;
      if (out) {
        g_assert_cmpuint(p[2], ==, 64); /* the clear colour: nothing drawn outside */
        n_outside++;
      } else if (in && ijk[0] < 3.5) {
        g_assert_cmpuint(p[0], ==, 0);
        n_black++;
      } else if (in && ijk[0] > 5.5) {
        g_assert_cmpuint(p[0], ==, 255);
        g_assert_cmpuint(p[1], ==, 255);
        n_white++;
      }
    }
  /* square in world -> square on screen: the fitted square covers 1/1.04^2 of the view */
  g_assert_cmpint(n_outside, >, 0);
  g_assert_cmpint(n_black, >, 300);
  g_assert_cmpint(n_white, >, 300);
  /* the drawn square's width and height in pixels agree (aspect from the spacing) */
  int w = 0, h = 0;
  for (int x = 0; x < W; x++)
    w += px(img, x, H / 2)[2] != 64;
  for (int y = 0; y < H; y++)
    h += px(img, W / 2, y)[2] != 64;
  g_assert_cmpint(abs(w - h), <=, 1);
  g_assert_cmpint(w, >=, 60);
  nw_gl_volume_free(gv);
}

static void test_slice_labels(void)
{
  g_autoptr(NwVolume) v = nw_volume_new(8, 8, 1, 1, NULL);
  for (int j = 0; j < 8; j++)
    for (int i = 0; i < 8; i++)
      v->data[nw_volume_index(v, i, j, 0)] = i < 4 ? 0.0f : 3.0f;
  NwGlVolume *gv = nw_gl_volume_new(v, TRUE, NULL);
  NwSliceGeometry g = axial_fit(v, 0.0);
  double mvp[16];
  float quad[12];
  nw_slice_geometry_mvp(&g, mvp);
  nw_slice_geometry_quad(&g, quad);
  NwLayerStyle st = {NW_COLORMAP_LABEL, 0.0f, 1.0f, 1.0f, FALSE, FALSE};
  clear();
  nw_render_slice_layer(renderer, mvp, quad, gv, &st);
  g_autofree guint8 *img = nw_gl_read_rgba(0, 0, W, H);
  guint8 lut[NW_LUT_SIZE * 4];
  nw_colormap_fill(NW_COLORMAP_LABEL, lut);
  const guint8 *want = lut + nw_colormap_label_index(3) * 4;
  double ijk[3];
  pixel_voxel(&g, v, 3 * W / 4, H / 2, ijk);
  g_assert_cmpfloat(ijk[0], >, 4.0);
  const guint8 *p = px(img, 3 * W / 4, H / 2);
  for (int c = 0; c < 3; c++)
    g_assert_cmpint(abs(p[c] - want[c]), <=, 1);
  /* label 0 is transparent: the clear colour shows */
  p = px(img, W / 4, H / 2);
  g_assert_cmpuint(p[0], ==, 0);
  g_assert_cmpuint(p[2], ==, 64);
  nw_gl_volume_free(gv);
}

/* A (100 everywhere) against B (0 everywhere) on a 16 x 16 x 1 grid of 1 mm. */
static guint8 *render_compare(NwCompareStyle *cmp, NwSliceGeometry *g_out)
{
  g_autoptr(NwVolume) a = nw_volume_new(16, 16, 1, 1, NULL);
  g_autoptr(NwVolume) b = nw_volume_new(16, 16, 1, 1, NULL);
  for (size_t i = 0; i < nw_volume_n_voxels(a); i++)
    a->data[i] = 100.0f;
  NwGlVolume *ga = nw_gl_volume_new(a, FALSE, NULL), *gb = nw_gl_volume_new(b, FALSE, NULL);
  NwSliceGeometry g = axial_fit(a, 0.0);
  double mvp[16];
  float quad[12];
  nw_slice_geometry_mvp(&g, mvp);
  nw_slice_geometry_quad(&g, quad);
  NwLayerStyle st = {NW_COLORMAP_GREY, 0.0f, 100.0f, 1.0f, FALSE, FALSE};
  clear();
  nw_render_slice_compare(renderer, mvp, quad, ga, &st, gb, &st, cmp, W);
  nw_gl_volume_free(ga);
  nw_gl_volume_free(gb);
  *g_out = g;
  return nw_gl_read_rgba(0, 0, W, H);
}

static void test_compare_modes(void)
{
  NwCompareStyle cmp;
  NwSliceGeometry g;
  nw_compare_style_init(&cmp);
  g_autofree guint8 *blend = render_compare(&cmp, &g);
  const guint8 *p = px(blend, W / 2, H / 2);
  /* A only: magenta */
  g_assert_cmpuint(p[0], ==, 255);
  g_assert_cmpuint(p[1], ==, 0);
  g_assert_cmpuint(p[2], ==, 255);

  cmp.mode = NW_COMPARE_CHECKER;
  cmp.tile_mm = 4.0f;
  g_autofree guint8 *checker = render_compare(&cmp, &g);
  int checked = 0;
  for (int y = 4; y < H - 4; y += 3)
    for (int x = 4; x < W - 4; x += 3) {
      double ras[3];
      nw_slice_geometry_pixel_to_world(&g, x + 0.5, y + 0.5, ras);
      double fx = ras[0] / 4.0 - floor(ras[0] / 4.0), fy = ras[1] / 4.0 - floor(ras[1] / 4.0);
      if (fx < 0.1 || fx > 0.9 || fy < 0.1 || fy > 0.9)
        continue; /* too near a tile edge */
      int parity = ((int)floor(ras[0] / 4.0) + (int)floor(ras[1] / 4.0)) & 1;
      g_assert_cmpuint(px(checker, x, y)[0], ==, parity == 0 ? 255 : 0);
      checked++;
    }
  g_assert_cmpint(checked, >, 50);

  cmp.mode = NW_COMPARE_DIFFERENCE;
  cmp.diff_range = 100.0f;
  g_autofree guint8 *diff = render_compare(&cmp, &g);
  guint8 lut[NW_LUT_SIZE * 4];
  nw_colormap_fill(NW_COLORMAP_DIVERGING, lut);
  p = px(diff, W / 2, H / 2); /* A - B = +range: the red end */
  for (int c = 0; c < 3; c++)
    g_assert_cmpint(abs(p[c] - lut[255 * 4 + c]), <=, 1);

  cmp.mode = NW_COMPARE_CURTAIN;
  cmp.curtain = 0.25f;
  g_autofree guint8 *curtain = render_compare(&cmp, &g);
  g_assert_cmpuint(px(curtain, W / 4 - 3, H / 2)[0], ==, 255);
  g_assert_cmpuint(px(curtain, W / 4 + 3, H / 2)[0], ==, 0);
  g_assert_cmpuint(px(curtain, 3 * W / 4, H / 2)[0], ==, 0);

  cmp.mode = NW_COMPARE_FLICKER;
  cmp.show_b = TRUE;
  g_autofree guint8 *flick = render_compare(&cmp, &g);
  g_assert_cmpuint(px(flick, W / 2, H / 2)[0], ==, 0);
  cmp.show_b = FALSE;
  g_autofree guint8 *flack = render_compare(&cmp, &g);
  g_assert_cmpuint(px(flack, W / 2, H / 2)[0], ==, 255);

  NwCompareMode m;
  g_assert_true(nw_compare_mode_from_name("checker", &m));
  g_assert_cmpint(m, ==, NW_COMPARE_CHECKER);
  g_assert_false(nw_compare_mode_from_name("wipe", &m));
}

static void test_mesh_lit(void)
{
  /* a 20 x 20 mm square in the plane y = 0, facing the camera at -y */
  g_autoptr(NwSurface) s = nw_surface_new(4, 2, NULL);
  const float v[12] = {-10, 0, -10, 10, 0, -10, 10, 0, 10, -10, 0, 10};
  const guint32 t[6] = {0, 1, 2, 0, 2, 3};
  memcpy(s->vertices, v, sizeof v);
  memcpy(s->triangles, t, sizeof t);
  g_autoptr(GError) error = NULL;
  NwGlMesh *m = nw_gl_mesh_new(s, &error);
  g_assert_no_error(error);
  NwOrbitCamera cam = {.yaw_deg = 0, .pitch_deg = 0, .width = W, .height = H};
  const double lo[3] = {-30, -30, -30}, hi[3] = {30, 30, 30};
  nw_orbit_camera_fit(&cam, lo, hi);
  double view[16], mvp[16];
  nw_orbit_camera_matrices(&cam, view, mvp);
  NwMeshStyle st = {.color = {1.0f, 0.0f, 0.0f, 1.0f}, .opacity = 1.0f};
  clear();
  glEnable(GL_DEPTH_TEST);
  nw_render_mesh(renderer, m, view, mvp, &st);
  glDisable(GL_DEPTH_TEST);
  g_autofree guint8 *img = nw_gl_read_rgba(0, 0, W, H);
  const guint8 *c = px(img, W / 2, H / 2);
  g_assert_cmpuint(c[0], >=, 250); /* head-on light: full diffuse */
  g_assert_cmpuint(c[2], <, 64);   /* not the clear colour's blue */
  g_assert_cmpuint(px(img, 1, 1)[2], ==, 64);
  nw_gl_mesh_free(m);

  /* per-vertex scalars through the colour map: all 1.0 on [0, 1] is the hot map's end */
  s->scalars = g_new(float, 4);
  for (int i = 0; i < 4; i++)
    s->scalars[i] = 1.0f;
  m = nw_gl_mesh_new(s, &error);
  g_assert_true(m->has_scalars);
  g_assert_cmpfloat(m->scalar_max, ==, 1.0f);
  NwMeshStyle hot = {
      .use_scalars = TRUE, .colormap = NW_COLORMAP_HOT, .lo = 0.0f, .hi = 2.0f, .opacity = 1.0f};
  clear();
  glEnable(GL_DEPTH_TEST);
  nw_render_mesh(renderer, m, view, mvp, &hot);
  glDisable(GL_DEPTH_TEST);
  g_autofree guint8 *img2 = nw_gl_read_rgba(0, 0, W, H);
  /* t = 0.5 of hot: between red and yellow; lit head-on, plus a little specular */
  guint8 lut[NW_LUT_SIZE * 4];
  nw_colormap_fill(NW_COLORMAP_HOT, lut);
  const guint8 *h = px(img2, W / 2, H / 2);
  g_assert_cmpint(h[0], >=, 250);
  g_assert_cmpint(abs(h[1] - MIN(255, (int)(0.5 * (lut[127 * 4 + 1] + lut[128 * 4 + 1])) + 46)), <=,
                  6);

  /* the cut-away octant facing the eye (here y < 0, everything) removes the square */
  NwMeshStyle cut = st;
  cut.cut = TRUE;
  cut.cut_sign[0] = cut.cut_sign[2] = 1.0f, cut.cut_sign[1] = -1.0f;
  cut.cut_center[0] = cut.cut_center[2] = -50.0f, cut.cut_center[1] = 5.0f;
  clear();
  nw_render_mesh(renderer, m, view, mvp, &cut);
  g_autofree guint8 *img3 = nw_gl_read_rgba(0, 0, W, H);
  g_assert_cmpuint(px(img3, W / 2, H / 2)[2], ==, 64);
  nw_gl_mesh_free(m);
}

/* The same slice shader with a perspective camera (the 3D view's slice planes). */
static void test_slice_in_3d(void)
{
  g_autoptr(NwVolume) v = halves_volume();
  NwGlVolume *gv = nw_gl_volume_new(v, FALSE, NULL);
  NwOrbitCamera cam = {.yaw_deg = 0, .pitch_deg = 0, .width = W, .height = H};
  double lo[3], hi[3];
  nw_volume_world_bounds(v, lo, hi);
  nw_orbit_camera_fit(&cam, lo, hi);
  double view[16], mvp[16];
  nw_orbit_camera_matrices(&cam, view, mvp);
  /* the coronal plane y = 10 mm, facing the camera (which looks along +y) */
  const float quad[12] = {(float)lo[0], 10, (float)lo[2], (float)hi[0], 10, (float)lo[2],
                          (float)lo[0], 10, (float)hi[2], (float)hi[0], 10, (float)hi[2]};
  NwLayerStyle st = {NW_COLORMAP_GREY, 0.0f, 100.0f, 1.0f, FALSE, FALSE};
  clear();
  glEnable(GL_DEPTH_TEST);
  nw_render_slice_layer(renderer, mvp, quad, gv, &st);
  glDisable(GL_DEPTH_TEST);
  g_autofree guint8 *img = nw_gl_read_rgba(0, 0, W, H);
  /* x grows to the right seen from behind (posterior): left half black, right half white */
  g_assert_cmpuint(px(img, W / 2 - 4, H / 2)[0], ==, 0);
  g_assert_cmpuint(px(img, W / 2 - 4, H / 2)[2], ==, 0);
  g_assert_cmpuint(px(img, W / 2 + 4, H / 2)[0], ==, 255);
  nw_gl_volume_free(gv);
}

static void test_plane_contour(void)
{
  g_autoptr(NwSurface) s = nw_surface_new(3, 1, NULL);
  const float v[9] = {0, 0, 0, 1, 0, 1, 0, 1, 1};
  memcpy(s->vertices, v, sizeof v);
  s->triangles[0] = 0, s->triangles[1] = 1, s->triangles[2] = 2;
  GArray *seg = g_array_new(FALSE, FALSE, sizeof(float));
  g_assert_cmpint(nw_surface_plane_contour(s, 2, 0.5, seg), ==, 1);
  const float *p = (const float *)(void *)seg->data;
  /* crossings at the middle of edges 0-1 and 2-0 */
  const float want[6] = {0.5f, 0, 0.5f, 0, 0.5f, 0.5f};
  for (int i = 0; i < 6; i++)
    g_assert_cmpfloat_with_epsilon(p[i], want[i], 1e-6);
  g_array_set_size(seg, 0);
  g_assert_cmpint(nw_surface_plane_contour(s, 2, 1.5, seg), ==, 0);
  g_array_free(seg, TRUE);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/render/colormaps", test_colormaps);
  g_test_add_func("/render/geometry", test_geometry);
  g_test_add_func("/render/plane-contour", test_plane_contour);
  if (!nw_test_gl_context(W, H, &target))
    return g_test_run() == 0 ? NW_TEST_SKIP : 1;
  g_autoptr(GError) error = NULL;
  renderer = nw_renderer_new(&error);
  g_assert_no_error(error);
  g_test_add_func("/render/slice-grey-aspect", test_slice_grey_and_aspect);
  g_test_add_func("/render/slice-labels", test_slice_labels);
  g_test_add_func("/render/compare-modes", test_compare_modes);
  g_test_add_func("/render/mesh-lit", test_mesh_lit);
  g_test_add_func("/render/slice-in-3d", test_slice_in_3d);
  int rc = g_test_run();
  nw_renderer_free(renderer);
  nw_gl_target_clear(&target);
  return rc;
}
