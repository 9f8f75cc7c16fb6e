/* test_render_live.c — the render/ half of the live view, without a GPU: textures made empty
 * (what interop fills) draw exactly like uploaded ones once filled, a four-component field
 * draws like a three-component one, a triangle-soup mesh draws like the same indexed mesh,
 * and without CUDA the interop calls fail with a message instead of drawing garbage.
 * Offscreen EGL with Mesa's software GL; skips (77) without a GL 3.3 core context. */
#include <string.h>

#include "field_renderer.h"
#include "gl_live.h"
#include "mesh_renderer.h"
#include "nw_cuda_gl.h"
#include "nw_error.h"
#include "nw_gl.h"
#include "renderer.h"
#include "testutil.h"
#include "view_geometry.h"

gboolean nw_test_gl_context(int w, int h, NwGlTarget *target);

enum { W = 64, H = 64 };
static NwGlTarget target;
static NwRenderer *renderer;

static guint8 *draw(void (*fn)(gpointer), gpointer data)
{
  glBindFramebuffer(GL_FRAMEBUFFER, target.fbo);
  glViewport(0, 0, W, H);
  glDisable(GL_DEPTH_TEST);
  glClearColor(0.0f, 0.0f, 0.25f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
  fn(data);
  return nw_gl_read_rgba(0, 0, W, H);
}

static NwSliceGeometry fit(const NwVolume *v)
{
  NwSliceGeometry g = {.plane = NW_PLANE_AXIAL, .width = W, .height = H};
  double lo[3], hi[3];
  nw_volume_world_bounds(v, lo, hi);
  nw_slice_geometry_fit(&g, lo, hi);
  g.center_ras[2] = 0.5 * (lo[2] + hi[2]);
  return g;
}

typedef struct {
  const NwVolume *like;
  const NwGlVolume *vol;
  gboolean field;
} Slice;

static void draw_slice(gpointer data)
{
  Slice *s = data;
  NwSliceGeometry g = fit(s->like);
  double mvp[16];
  float quad[12];
  nw_slice_geometry_mvp(&g, mvp);
  nw_slice_geometry_quad(&g, quad);
  NwLayerStyle st = {NW_COLORMAP_HOT, 0.0f, 5.0f, 1.0f, FALSE, FALSE};
  if (s->field)
    nw_render_field_heat(renderer, mvp, quad, s->vol, NW_FIELD_HEAT_MAGNITUDE, &st);
  else
    nw_render_slice_layer(renderer, mvp, quad, s->vol, &st);
}

static void assert_same_pixels(const guint8 *a, const guint8 *b)
{
  int differ = 0, drawn = 0;
  for (int i = 0; i < W * H; i++) {
    differ += memcmp(a + i * 4, b + i * 4, 4) != 0;
    drawn += a[i * 4 + 2] != 64;
  }
  g_assert_cmpint(differ, ==, 0);
  g_assert_cmpint(drawn, >, W * H / 2); /* and it is not an empty picture */
}

/* An empty R32F texture filled afterwards draws as the uploaded volume. */
static void test_empty_image(void)
{
  g_autoptr(NwVolume) v = nw_test_volume(12, 10, 4, 1, 3);
  nw_volume_set_spacing(v, 1.5, 2.0, 1.0);
  for (size_t i = 0; i < nw_volume_n_voxels(v); i++)
    v->data[i] = (float)(i % 12) * 0.4f;
  g_autoptr(GError) error = NULL;
  NwGlVolume *up = nw_gl_volume_new(v, FALSE, &error);
  NwGlVolume *empty = nw_gl_volume_new_empty(v->nx, v->ny, v->nz, 1, v->vox_to_ras, &error);
  g_assert_no_error(error);
  g_assert_cmpfloat(empty->ras_to_tex[0], ==, up->ras_to_tex[0]);
  glBindTexture(GL_TEXTURE_3D, empty->tex);
  glTexSubImage3D(GL_TEXTURE_3D, 0, 0, 0, 0, v->nx, v->ny, v->nz, GL_RED, GL_FLOAT, v->data);
  Slice a = {v, up, FALSE}, b = {v, empty, FALSE};
  g_autofree guint8 *pa = draw(draw_slice, &a);
  g_autofree guint8 *pb = draw(draw_slice, &b);
  assert_same_pixels(pa, pb);
  nw_gl_volume_free(up);
  nw_gl_volume_free(empty);

  /* sizes the interop path cannot use are refused with the reason */
  g_assert_null(nw_gl_volume_new_empty(4, 4, 4, 3, v->vox_to_ras, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_INVALID);
  g_assert_nonnull(strstr(error->message, "expected 1 or 4 components"));
}

/* A field as RGBA (what CUDA fills, w unused) draws as the same field as RGB. */
static void test_rgba_field(void)
{
  g_autoptr(NwVolume) u = nw_volume_new(10, 10, 5, 3, NULL);
  g_autoptr(NwVolume) u4 = nw_volume_new(10, 10, 5, 4, NULL);
  for (size_t i = 0; i < nw_volume_n_voxels(u); i++)
    for (int c = 0; c < 4; c++) {
      float x = (float)((i * (c + 3)) % 7) * 0.3f;
      if (c < 3)
        u->data[i * 3 + c] = x;
      u4->data[i * 4 + c] = c < 3 ? x : 123.0f; /* w must not matter */
    }
  g_autoptr(GError) error = NULL;
  NwGlVolume *g3 = nw_gl_volume_new(u, FALSE, &error);
  NwGlVolume *g4 = nw_gl_volume_new_empty(10, 10, 5, 4, u->vox_to_ras, &error);
  g_assert_no_error(error);
  g_assert_cmpint(g4->nc, ==, 4);
  glBindTexture(GL_TEXTURE_3D, g4->tex);
  glTexSubImage3D(GL_TEXTURE_3D, 0, 0, 0, 0, 10, 10, 5, GL_RGBA, GL_FLOAT, u4->data);
  Slice a = {u, g3, TRUE}, b = {u, g4, TRUE};
  g_autofree guint8 *pa = draw(draw_slice, &a);
  g_autofree guint8 *pb = draw(draw_slice, &b);
  assert_same_pixels(pa, pb);
  nw_gl_volume_free(g3);
  nw_gl_volume_free(g4);
}

/* The texels GL holds for g, read back (nc 1: R, else RGBA). */
static float *texels(const NwGlVolume *g)
{
  const int per = g->nc == 1 ? 1 : 4;
  float *out = g_new(float, (size_t)g->nx * g->ny * g->nz * per);
  glBindTexture(GL_TEXTURE_3D, g->tex);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glGetTexImage(GL_TEXTURE_3D, 0, per == 1 ? GL_RED : GL_RGBA, GL_FLOAT, out);
  return out;
}

/* Every texel equals v's voxel (fields padded with w = 0). */
static void assert_texels(const NwGlVolume *g, const NwVolume *v)
{
  g_autofree float *t = texels(g);
  const int per = v->nc == 1 ? 1 : 4;
  for (size_t i = 0; i < nw_volume_n_voxels(v); i++)
    for (int c = 0; c < per; c++) {
      const float want = c < v->nc ? v->data[i * v->nc + c] : 0.0f;
      if (t[i * per + c] != want)
        g_error("texel %zu component %d: %g, expected %g", i, c, t[i * per + c], want);
    }
}

/* Volumes made and then replaced (nw_gl_volume_update, through the pixel-unpack buffer):
 * the texture holds exactly the voxels each time, fields as RGBA with w = 0, and replacing
 * them again (the buffer orphaned, or the next slot of the ring, while the last transfer may
 * still read it) keeps the newest. Both paths: the ring where GL has buffer storage (Mesa's
 * and NVIDIA's have), and the orphaned buffer that NW_GL_UPLOAD_RING=0 asks for. More
 * rounds than the ring has slots, so slots are taken again once their fences signal. A small
 * volume and one large enough for the copy into the buffer to be shared among threads
 * (pack_texels, in pieces of 65,536 voxels: here 4.1 of them). */
static void check_update_texels(gboolean ring)
{
  static const int sizes[2][3] = {{9, 7, 5}, {70, 64, 60}};
  for (int sz = 0; sz < 2; sz++)
  for (int nc = 1; nc <= 3; nc += 2) {
    g_autoptr(NwVolume) v = nw_volume_new(sizes[sz][0], sizes[sz][1], sizes[sz][2], nc, NULL);
    for (size_t i = 0; i < nw_volume_n_floats(v); i++)
      v->data[i] = (float)((i * 37) % 101) * 0.25f - 7.0f;
    g_autoptr(GError) error = NULL;
    NwGlVolume *g = nw_gl_volume_new(v, FALSE, &error);
    g_assert_no_error(error);
    assert_texels(g, v);
    for (int round = 1; round <= 2 * NW_GL_UPLOAD_SLOTS + 1; round++) {
      for (size_t i = 0; i < nw_volume_n_floats(v); i++)
        v->data[i] = (float)round * 1000.0f + (float)i;
      nw_gl_volume_update(g, v);
      if (round == 2) /* the middle of the run, not only the last */
        assert_texels(g, v);
    }
    g_assert_cmpuint(g->pbo, !=, 0);
    g_assert_true((g->ring != NULL) == ring);
    assert_texels(g, v);
    g_assert_cmpint(glGetError(), ==, GL_NO_ERROR);
    nw_gl_volume_free(g);
  }
}

/* A texture prepared for updates (a live view's) holds its second texture and its ring
 * before the first update, and that update lands like any other. */
static void test_prepared_updates(void)
{
  g_autoptr(NwVolume) v = nw_volume_new(9, 7, 5, 3, NULL);
  g_autoptr(GError) error = NULL;
  NwGlVolume *g = nw_gl_volume_new(v, FALSE, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(g->spare, ==, 0);
  nw_gl_volume_prepare_updates(g, v);
  g_assert_cmpuint(g->spare, !=, 0);
  g_assert_true((g->ring != NULL) == (GLEW_VERSION_4_4 || GLEW_ARB_buffer_storage));
  for (size_t i = 0; i < nw_volume_n_floats(v); i++)
    v->data[i] = 0.5f * (float)i - 3.0f;
  g_assert_null(g->dma); /* GLib's memory: nothing for the copy engines */
  nw_gl_volume_update(g, v);
  assert_texels(g, v);
  g_assert_cmpuint(g->dma_updates, ==, 0);
  g_assert_cmpuint(g->cpu_updates, ==, g->ring != NULL ? 1 : 0);
  g_assert_cmpint(glGetError(), ==, GL_NO_ERROR);
  nw_gl_volume_free(g);
}

static void test_update_texels(void)
{
  if (!(GLEW_VERSION_4_4 || GLEW_ARB_buffer_storage))
    g_test_message("no buffer storage in this GL: the ring is not tried");
  else
    check_update_texels(TRUE);
  g_setenv("NW_GL_UPLOAD_RING", "0", TRUE);
  check_update_texels(FALSE);
  g_unsetenv("NW_GL_UPLOAD_RING");
}

typedef struct {
  const NwGlMesh *mesh;
} Mesh;

static void draw_mesh(gpointer data)
{
  Mesh *m = data;
  NwOrbitCamera cam = {.yaw_deg = 20, .pitch_deg = 10, .width = W, .height = H};
  const double lo[3] = {-30, -30, -30}, hi[3] = {30, 30, 30};
  nw_orbit_camera_fit(&cam, lo, hi);
  double view[16], mvp[16];
  nw_orbit_camera_matrices(&cam, view, mvp);
  NwMeshStyle st = {.color = {0.9f, 0.6f, 0.3f, 1.0f}, .opacity = 1.0f};
  glEnable(GL_DEPTH_TEST);
  nw_render_mesh(renderer, m->mesh, view, mvp, &st);
  glDisable(GL_DEPTH_TEST);
}

/* The same two triangles, indexed and as a soup (6 floats per vertex), draw the same. */
static void test_soup_mesh(void)
{
  g_autoptr(NwSurface) s = nw_surface_new(4, 2, NULL);
  const float v[12] = {-12, 0, -10, 10, 3, -10, 10, 0, 12, -10, -2, 10};
  const guint32 t[6] = {0, 1, 2, 0, 2, 3};
  memcpy(s->vertices, v, sizeof v);
  memcpy(s->triangles, t, sizeof t);
  nw_surface_compute_normals(s);
  float soup[2 * 3 * NW_GL_MESH_SOUP_FLOATS];
  for (int k = 0; k < 6; k++) {
    memcpy(soup + k * 6, s->vertices + t[k] * 3, 3 * sizeof(float));
    memcpy(soup + k * 6 + 3, s->normals + t[k] * 3, 3 * sizeof(float));
  }
  g_autoptr(GError) error = NULL;
  NwGlMesh *indexed = nw_gl_mesh_new(s, &error);
  NwGlMesh *sm = nw_gl_mesh_new_soup(16, &error);
  g_assert_no_error(error);
  g_assert_true(sm->soup);
  glBindBuffer(GL_ARRAY_BUFFER, sm->vbo_pos);
  glBufferSubData(GL_ARRAY_BUFFER, 0, sizeof soup, soup);
  sm->n_triangles = 2;
  Mesh a = {indexed}, b = {sm};
  g_autofree guint8 *pa = draw(draw_mesh, &a);
  g_autofree guint8 *pb = draw(draw_mesh, &b);
  int differ = 0, drawn = 0;
  for (int i = 0; i < W * H; i++) {
    for (int c = 0; c < 3; c++)
      differ += abs(pa[i * 4 + c] - pb[i * 4 + c]) > 1;
    drawn += pa[i * 4 + 2] != 64;
  }
  g_assert_cmpint(differ, ==, 0);
  g_assert_cmpint(drawn, >, 100);
  /* zero triangles: nothing drawn */
  sm->n_triangles = 0;
  g_autofree guint8 *pc = draw(draw_mesh, &b);
  for (int i = 0; i < W * H; i++)
    g_assert_cmpuint(pc[i * 4 + 2], ==, 64);
  nw_gl_mesh_free(indexed);
  nw_gl_mesh_free(sm);
  g_assert_null(nw_gl_mesh_new_soup(0, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_INVALID);
}

/* Interop is offered exactly when the machine has both halves: a CUDA device this build can
 * use (a live front can be made) and a GL context on NVIDIA's driver. Under Mesa (CI) it
 * says why not, so the application falls back to host frames; on the GPU machine's EGL
 * context it must say yes (test_cuda_gl_interop then exercises the copies). */
static void test_interop_follows_machine(void)
{
  g_autoptr(GError) error = NULL;
  NwLiveFront *front = nw_live_front_new(&error);
  const char *vendor = (const char *)glGetString(GL_VENDOR);
  const gboolean nvidia_gl = vendor != NULL && strstr(vendor, "NVIDIA") != NULL;
  const gboolean have_cuda = front != NULL, expected = have_cuda && nvidia_gl;
  if (!have_cuda) /* no CUDA build or no device: the message says which */
    g_assert_true(strstr(error->message, "CUDA") != NULL || strstr(error->message, "cuda") != NULL);
  nw_live_front_free(front);
  char why[256] = "";
  const gboolean available = nw_cuda_gl_available(why, sizeof why);
  g_test_message("GL vendor %s, CUDA device %s: interop %s %s", vendor ? vendor : "?",
                 have_cuda ? "yes" : "no", available ? "available" : "unavailable:", why);
  g_assert_cmpint(available, ==, expected);
  if (!available)
    g_assert_true(strstr(why, "CUDA") != NULL || strstr(why, "GL context") != NULL);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  if (!nw_test_gl_context(W, H, &target))
    return NW_TEST_SKIP;
  g_autoptr(GError) error = NULL;
  renderer = nw_renderer_new(&error);
  g_assert_no_error(error);
  g_test_add_func("/render-live/empty-image", test_empty_image);
  g_test_add_func("/render-live/rgba-field", test_rgba_field);
  g_test_add_func("/render-live/update-texels", test_update_texels);
  g_test_add_func("/render-live/prepared-updates", test_prepared_updates);
  g_test_add_func("/render-live/soup-mesh", test_soup_mesh);
  g_test_add_func("/render-live/interop-follows-machine", test_interop_follows_machine);
  int rc = g_test_run();
  nw_renderer_free(renderer);
  nw_gl_target_clear(&target);
  return rc;
}
