/* nw_view_render.c — drawing the scene in one view's GL context (see nw_view_render.h).
 * Layers draw bottom first: images (the compared pair through the compare shader), label
 * maps, field overlays, surface contours; then the crosshair, the orientation letters and
 * the colour and scale bars (nw_view_overlay.h), cairo-drawn sprites so that screenshots
 * carry them.
 * Main thread, with the view's GL context current. */
#include "nw_view_render.h"

#include <cairo.h>
#include <math.h>
#include <string.h>

#include "field_renderer.h"
#include "gl_live.h"
#include "live_source.h"
#include "mesh_renderer.h"
#include "nw_gl.h"
#include "nw_view_overlay.h"

const float nw_crosshair_color[4] = {1.0f, 0.85f, 0.0f, 0.9f};
const float nw_view_background[3] = {0.06f, 0.06f, 0.08f};

typedef struct {
  NwLayer *layer; /* a reference */
  guint generation;
  NwGlVolume *vol;
  NwGlMesh *mesh;
  GArray *contour[3]; /* per world axis: segments at contour_depth */
  double contour_depth[3];
  gboolean used;
  NwGlLive *live; /* layers of a run on the interop path: the job's GL objects (borrowed from
                     the cache's lives) */
  GLuint label_colors;        /* label maps with a table: their colours (nw_label_colors_new) */
  NwLabelTable *colors_table; /* the table they were made from (a reference) */
} GpuEntry;

/* The interop objects of one live job, shared by its layers and the views. */
typedef struct {
  NwGlLive *gl;
  gboolean failed; /* interop failed once: its layers show host data from then on */
} LiveEntry;

/* The layers' GL objects, one per share group of contexts. */
typedef struct {
  int ref;
  GHashTable *entries;   /* NwLayer* -> GpuEntry* */
  GHashTable *lives;     /* live source id (guint64*) -> LiveEntry* */
  GObject *share_group;  /* weak: the cache is its data "nw-gpu-cache" while it lives */
} GpuCache;

static void live_entry_free(gpointer p)
{
  LiveEntry *le = p;
  nw_gl_live_free(le->gl);
  g_free(le);
}

struct NwViewGpu {
  NwRenderer *r;
  GpuCache *cache;
  GHashTable *entries;  /* cache->entries */
  GHashTable *lives;    /* cache->lives */
  NwSprite *letters[6]; /* L R A P S I */
  NwViewOverlay *overlay; /* colour bars and scale bar */
};

static const char cache_key[] = "nw-gpu-cache";

static const char letter_chars[] = "LRAPSI";

static void entry_free(gpointer p)
{
  GpuEntry *e = p;
  nw_gl_volume_free(e->vol);
  nw_gl_mesh_free(e->mesh);
  if (e->label_colors != 0)
    glDeleteTextures(1, &e->label_colors);
  nw_label_table_unref(e->colors_table);
  for (int a = 0; a < 3; a++)
    if (e->contour[a] != NULL)
      g_array_free(e->contour[a], TRUE);
  g_object_unref(e->layer);
  g_free(e);
}

/* A bold letter with a dark outline, readable on any image. */
static NwSprite *letter_sprite(char c)
{
  const int w = 20, h = 22;
  cairo_surface_t *cs = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
  cairo_t *cr = cairo_create(cs);
  char text[2] = {c, 0};
  cairo_select_font_face(cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
  cairo_set_font_size(cr, 16);
  cairo_text_extents_t ext;
  cairo_text_extents(cr, text, &ext);
  cairo_move_to(cr, 0.5 * (w - ext.width) - ext.x_bearing, 0.5 * (h - ext.height) - ext.y_bearing);
  cairo_text_path(cr, text);
  nw_overlay_outline_fill(cr, 3.0, 0.55, 0.85, 1.0);
  cairo_surface_flush(cs);
  NwSprite *s =
      nw_sprite_new(cairo_image_surface_get_data(cs), w, h, cairo_image_surface_get_stride(cs));
  cairo_destroy(cr);
  cairo_surface_destroy(cs);
  return s;
}

/* The cache of share_group (made on first use), or a cache of one's own without a group. */
static GpuCache *cache_ref(GObject *share_group)
{
  GpuCache *c = share_group != NULL ? g_object_get_data(share_group, cache_key) : NULL;
  if (c == NULL) {
    c = g_new0(GpuCache, 1);
    c->entries = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, entry_free);
    c->lives = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, live_entry_free);
    c->share_group = share_group;
    if (share_group != NULL)
      g_object_set_data(share_group, cache_key, c);
  }
  c->ref++;
  return c;
}

/* With a context of the group current: the last view frees the GL objects. */
static void cache_unref(GpuCache *c)
{
  if (--c->ref > 0)
    return;
  if (c->share_group != NULL)
    g_object_set_data(c->share_group, cache_key, NULL);
  g_hash_table_destroy(c->entries);
  g_hash_table_destroy(c->lives);
  g_free(c);
}

NwViewGpu *nw_view_gpu_new(GObject *share_group, GError **error)
{
  NwRenderer *r = nw_renderer_new(error);
  if (r == NULL)
    return NULL;
  NwViewGpu *gpu = g_new0(NwViewGpu, 1);
  gpu->r = r;
  gpu->cache = cache_ref(share_group);
  gpu->entries = gpu->cache->entries;
  gpu->lives = gpu->cache->lives;
  for (int i = 0; i < 6; i++)
    gpu->letters[i] = letter_sprite(letter_chars[i]);
  gpu->overlay = nw_view_overlay_new();
  return gpu;
}

void nw_view_gpu_free(NwViewGpu *gpu)
{
  if (gpu == NULL)
    return;
  cache_unref(gpu->cache);
  for (int i = 0; i < 6; i++)
    nw_sprite_free(gpu->letters[i]);
  nw_view_overlay_free(gpu->overlay);
  nw_renderer_free(gpu->r);
  g_free(gpu);
}

void nw_view_render_begin_frame(NwScene *scene, guint64 frame_counter, gint64 wait_us)
{
  /* the sources first: a source's take callback may change its layers */
  NwLiveSource *sources[8];
  int n = 0;
  for (guint i = 0; i < nw_scene_n_layers(scene) && n < 8; i++) {
    NwLiveSource *src = nw_layer_get_live(nw_scene_get_layer(scene, i));
    gboolean seen = src == NULL;
    for (int k = 0; k < n && !seen; k++)
      seen = sources[k] == src;
    if (!seen)
      sources[n++] = src;
  }
  for (int k = 0; k < n; k++)
    nw_live_source_begin_frame(sources[k], frame_counter, wait_us);
}

/* Live layers on the interop path: bring the job's shared interop objects up to its newest
 * frame (one fill per frame for every part its layers show: the first view to draw a
 * display frame copies, the others find it done). The live mesh has no 2D contours (those
 * are cut from a host NwSurface on the CPU); the 3D view shows it. When interop fails the
 * job's layers fall back to their host data, with one warning. */
static void update_live(NwViewGpu *gpu, GpuEntry *e, NwLayer *l)
{
  e->live = NULL;
  NwLiveSource *live = nw_layer_get_live(l);
  if (live == NULL || nw_live_source_path(live) != NW_LIVE_PATH_INTEROP)
    return;
  const guint64 id = nw_live_source_id(live);
  LiveEntry *le = g_hash_table_lookup(gpu->lives, &id);
  if (le == NULL) {
    le = g_new0(LiveEntry, 1);
    le->gl = nw_gl_live_new(0, nw_layer_get_live_iso(l));
    g_hash_table_insert(gpu->lives, g_memdup2(&id, sizeof id), le);
  }
  if (le->failed)
    return;
  const NwLayerKind kind = nw_layer_get_kind(l);
  nw_gl_live_add_parts(le->gl, kind == NW_LAYER_FIELD     ? NW_GL_LIVE_FIELD
                               : kind == NW_LAYER_SURFACE ? NW_GL_LIVE_MESH
                                                          : NW_GL_LIVE_IMAGE);
  if (kind == NW_LAYER_SURFACE)
    nw_gl_live_set_iso(le->gl, nw_layer_get_live_iso(l));
  g_autoptr(GError) error = NULL;
  if (!nw_gl_live_update(le->gl, nw_live_source_front(live), nw_live_source_fresh_coming(live),
                         &error)) {
    g_warning("%s: live view through CUDA-GL interop failed, showing host frames: %s",
              nw_layer_get_name(l), error->message);
    le->failed = TRUE;
    return;
  }
  if (nw_gl_live_awaits_frame(le->gl)) /* its answer asks for the redraw that fills it */
    nw_live_source_want(live);
  e->live = le->gl;
  nw_layer_note_live_shown(l, nw_gl_live_iteration(le->gl));
}

/* The GL objects of a layer, (re)made when missing or stale; NULL when the GPU refuses
 * (too large): the layer is then skipped in this view. */
static GpuEntry *entry_for(NwViewGpu *gpu, NwLayer *l)
{
  GpuEntry *e = g_hash_table_lookup(gpu->entries, l);
  const NwVolume *v = nw_layer_get_volume(l);
  const NwSurface *surf = nw_layer_get_surface(l);
  const guint generation = nw_layer_get_generation(l);
  gboolean regrid = FALSE; /* remade for voxels on another grid */
  if (e != NULL && e->generation != generation) {
    /* new voxels on the same grid (a live job's frames): refill the texture in place */
    if (e->vol != NULL && v != NULL && v->nx == e->vol->nx && v->ny == e->vol->ny &&
        v->nz == e->vol->nz && v->nc == e->vol->nc) {
      nw_gl_volume_update(e->vol, v);
      e->generation = generation;
    } else {
      g_hash_table_remove(gpu->entries, l);
      e = NULL;
      regrid = TRUE;
    }
  }
  if (e == NULL) {
    e = g_new0(GpuEntry, 1);
    e->layer = g_object_ref(l);
    e->generation = generation;
    g_autoptr(GError) error = NULL;
    if (v != NULL) {
      e->vol = nw_gl_volume_new(v, nw_layer_get_kind(l) == NW_LAYER_LABELS, &error);
      /* a running job's host frames on their (reduced) grid: refilled every frame from now */
      NwLiveSource *live = nw_layer_get_live(l);
      if (e->vol != NULL && regrid && live != NULL &&
          nw_live_source_path(live) == NW_LIVE_PATH_HOST)
        nw_gl_volume_prepare_updates(e->vol, v);
    } else if (surf != NULL && surf->n_triangles > 0)
      e->mesh = nw_gl_mesh_new(surf, &error);
    if (error != NULL)
      g_warning("%s: %s", nw_layer_get_name(l), error->message);
    g_hash_table_insert(gpu->entries, l, e);
  }
  e->used = TRUE;
  update_live(gpu, e, l);
  return e;
}

/* The volume a layer draws from in this view: the live texture while its run feeds one. */
static const NwGlVolume *entry_volume(const GpuEntry *e)
{
  if (e->live != NULL) {
    const NwGlVolume *v = nw_layer_get_kind(e->layer) == NW_LAYER_FIELD ? nw_gl_live_field(e->live)
                                                                        : nw_gl_live_image(e->live);
    if (v != NULL)
      return v;
  }
  return e->vol;
}

static const NwGlMesh *entry_mesh(const GpuEntry *e)
{
  const NwGlMesh *m = e->live != NULL ? nw_gl_live_mesh(e->live) : NULL;
  return m != NULL ? m : e->mesh;
}

/* Drop the GL objects of layers the scene no longer has, and of jobs no layer shows. */
static void prune(NwViewGpu *gpu, NwScene *scene)
{
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, gpu->entries);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    gboolean present = FALSE;
    for (guint i = 0; i < nw_scene_n_layers(scene) && !present; i++)
      present = nw_scene_get_layer(scene, i) == key;
    if (!present)
      g_hash_table_iter_remove(&it);
  }
  g_hash_table_iter_init(&it, gpu->lives);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    gboolean present = FALSE;
    for (guint i = 0; i < nw_scene_n_layers(scene) && !present; i++) {
      NwLiveSource *src = nw_layer_get_live(nw_scene_get_layer(scene, i));
      present = src != NULL && nw_live_source_id(src) == *(const guint64 *)key;
    }
    if (!present)
      g_hash_table_iter_remove(&it);
  }
}

static void clear_view(int w, int h, gboolean depth)
{
  glViewport(0, 0, w, h);
  glClearColor(nw_view_background[0], nw_view_background[1], nw_view_background[2], 1.0f);
  glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
  glDepthFunc(GL_LEQUAL); /* layers on one slice plane share depths: later ones draw over */
  if (depth)
    glEnable(GL_DEPTH_TEST);
  else
    glDisable(GL_DEPTH_TEST);
}

/* The colour texture of a label layer with a table (0 without one), made again when the
 * layer gets another table: the table's colours, the default label colours where it has
 * none, label 0 transparent. */
static GLuint label_colors(GpuEntry *e)
{
  NwLabelTable *t = nw_layer_get_label_table(e->layer);
  if (t != e->colors_table) {
    if (e->label_colors != 0)
      glDeleteTextures(1, &e->label_colors);
    e->label_colors = 0;
    nw_label_table_unref(e->colors_table);
    e->colors_table = t != NULL ? nw_label_table_ref(t) : NULL;
  }
  if (t == NULL || e->label_colors != 0)
    return e->label_colors;
  float lo, hi;
  nw_layer_get_data_range(e->layer, &lo, &hi);
  const int n = CLAMP(MAX(nw_label_table_max_index(t), (int)hi) + 1, 1, 65536);
  guint8 lut[NW_LUT_SIZE * 4];
  nw_colormap_fill(NW_COLORMAP_LABEL, lut);
  g_autofree guint8 *rgba = g_malloc0((size_t)n * 4);
  for (int l = 1; l < n; l++)
    if (!nw_label_table_color(t, l, rgba + 4 * l))
      memcpy(rgba + 4 * l, lut + 4 * nw_colormap_label_index(l), 4);
  e->label_colors = nw_label_colors_new(rgba, n);
  return e->label_colors;
}

/* Images and label maps on one quad (2D view rectangle or 3D slice plane). */
static void draw_volumes(NwViewGpu *gpu, NwScene *scene, const double mvp[16], const float quad[12],
                         int viewport_w, gboolean clear_background)
{
  gboolean comparing = nw_scene_comparing(scene);
  NwLayer *a = nw_scene_get_compare_a(scene), *b = nw_scene_get_compare_b(scene);
  for (guint i = 0; i < nw_scene_n_layers(scene); i++) {
    NwLayer *l = nw_scene_get_layer(scene, i);
    const NwLayerKind kind = nw_layer_get_kind(l);
    if (!nw_layer_get_visible(l) || (kind != NW_LAYER_IMAGE && kind != NW_LAYER_LABELS))
      continue;
    if (comparing && l == b)
      continue;
    GpuEntry *e = entry_for(gpu, l);
    const NwGlVolume *vol = entry_volume(e);
    if (vol == NULL)
      continue;
    /* in 3D the empty background of a slice is see-through, so planes hide less */
    NwLayerStyle st = *nw_layer_get_style(l);
    st.clear_below = st.clear_below || clear_background;
    if (comparing && l == a) {
      const NwGlVolume *vb = entry_volume(entry_for(gpu, b));
      NwLayerStyle sb = *nw_layer_get_style(b);
      sb.clear_below = sb.clear_below || clear_background;
      if (vb != NULL)
        nw_render_slice_compare(gpu->r, mvp, quad, vol, &st, vb, &sb,
                                nw_scene_get_compare(scene), viewport_w);
    } else if (kind == NW_LAYER_LABELS) {
      nw_render_slice_labels(gpu->r, mvp, quad, vol, &st, label_colors(e));
    } else {
      nw_render_slice_layer(gpu->r, mvp, quad, vol, &st);
    }
  }
}

static void draw_fields(NwViewGpu *gpu, NwScene *scene, const NwSliceGeometry *g,
                        const double mvp[16], const float quad[12])
{
  for (guint i = 0; i < nw_scene_n_layers(scene); i++) {
    NwLayer *l = nw_scene_get_layer(scene, i);
    if (!nw_layer_get_visible(l) || nw_layer_get_kind(l) != NW_LAYER_FIELD)
      continue;
    const NwGlVolume *f = entry_volume(entry_for(gpu, l));
    if (f == NULL)
      continue;
    const NwLayerStyle *style = nw_layer_get_style(l);
    const float *color = nw_layer_get_color(l);
    float rgba[4] = {color[0], color[1], color[2], style->opacity};
    /* the step is in voxels of the layer's grid; a live texture may be reduced (gl_live.h):
     * the same millimetres in its voxels */
    const NwVolume *v = nw_layer_get_volume(l);
    int step = nw_layer_get_grid_step(l);
    if (v != NULL && f->nx < v->nx)
      step = MAX(1, (int)lround((double)step * f->nx / v->nx));
    /* arrows: the longest one spans 90 % of the gap to its neighbour */
    double step_mm = nw_field_grid_step_mm(f, 0, step);
    float data_min, data_max;
    nw_layer_get_data_range(l, &data_min, &data_max);
    float arrow_scale = data_max > 0.0f ? (float)(0.9 * step_mm / data_max) : 1.0f;
    switch (nw_layer_get_field_show(l)) {
    case NW_FIELD_SHOW_GRID:
      nw_render_field_grid(gpu->r, g, f, step, 1.0f, rgba);
      break;
    case NW_FIELD_SHOW_ARROWS:
      nw_render_field_arrows(gpu->r, g, f, step, arrow_scale, 0.05f, rgba);
      break;
    case NW_FIELD_SHOW_MAGNITUDE:
      nw_render_field_heat(gpu->r, mvp, quad, f, NW_FIELD_HEAT_MAGNITUDE, style);
      break;
    default:
      nw_render_field_heat(gpu->r, mvp, quad, f, NW_FIELD_HEAT_LOG_JACOBIAN, style);
      break;
    }
  }
}

static void draw_contours(NwViewGpu *gpu, NwScene *scene, const NwSliceGeometry *g,
                          const double mvp[16])
{
  int u, v, n;
  nw_plane_axes(g->plane, &u, &v, &n);
  double depth = g->center_ras[n];
  for (guint i = 0; i < nw_scene_n_layers(scene); i++) {
    NwLayer *l = nw_scene_get_layer(scene, i);
    const NwSurface *surf = nw_layer_get_surface(l);
    if (!nw_layer_get_visible(l) || nw_layer_get_kind(l) != NW_LAYER_SURFACE || surf == NULL)
      continue;
    GpuEntry *e = entry_for(gpu, l);
    if (e->contour[n] == NULL || e->contour_depth[n] != depth) {
      if (e->contour[n] == NULL)
        e->contour[n] = g_array_new(FALSE, FALSE, sizeof(float));
      g_array_set_size(e->contour[n], 0);
      nw_surface_plane_contour(surf, n, depth, e->contour[n]);
      e->contour_depth[n] = depth;
    }
    const float *color = nw_layer_get_color(l);
    float rgba[4] = {color[0], color[1], color[2], nw_layer_get_style(l)->opacity};
    nw_render_lines(gpu->r, mvp, (const float *)(void *)e->contour[n]->data,
                    (int)(e->contour[n]->len / 3), rgba);
  }
}

static void draw_crosshair(NwViewGpu *gpu, NwScene *scene, const NwSliceGeometry *g,
                           const double mvp[16])
{
  int u, v, n;
  nw_plane_axes(g->plane, &u, &v, &n);
  double c[3], lo[3], hi[3];
  nw_scene_get_crosshair(scene, c);
  nw_slice_geometry_pixel_to_world(g, 0, g->height, lo);
  nw_slice_geometry_pixel_to_world(g, g->width, 0, hi);
  float p[12];
  for (int k = 0; k < 4; k++)
    p[k * 3 + n] = (float)g->center_ras[n];
  p[0 + u] = (float)lo[u], p[0 + v] = (float)c[v];
  p[3 + u] = (float)hi[u], p[3 + v] = (float)c[v];
  p[6 + u] = (float)c[u], p[6 + v] = (float)lo[v];
  p[9 + u] = (float)c[u], p[9 + v] = (float)hi[v];
  nw_render_lines(gpu->r, mvp, p, 4, nw_crosshair_color);
}

static void draw_letters(NwViewGpu *gpu, const NwSliceGeometry *g)
{
  const char *l[4];
  nw_slice_geometry_letters(g, l);
  int w = g->width, h = g->height;
  const double pos[4][2] = {
      {4, 0.5 * h - 11}, {w - 24, 0.5 * h - 11}, {0.5 * w - 10, 4}, {0.5 * w - 10, h - 26}};
  for (int i = 0; i < 4; i++) {
    const char *c = strchr(letter_chars, l[i][0]);
    nw_render_sprite(gpu->r, gpu->letters[c - letter_chars], pos[i][0], pos[i][1], w, h);
  }
}

void nw_view_render_slice(NwViewGpu *gpu, NwScene *scene, const NwSliceGeometry *g)
{
  prune(gpu, scene);
  clear_view(g->width, g->height, FALSE);
  double mvp[16];
  float quad[12];
  nw_slice_geometry_mvp(g, mvp);
  nw_slice_geometry_quad(g, quad);
  draw_volumes(gpu, scene, mvp, quad, g->width, FALSE);
  draw_fields(gpu, scene, g, mvp, quad);
  draw_contours(gpu, scene, g, mvp);
  draw_crosshair(gpu, scene, g, mvp);
  draw_letters(gpu, g);
  NwOverlayLayout overlay;
  nw_view_overlay_layout(scene, g, &overlay);
  nw_view_overlay_draw(gpu->overlay, gpu->r, &overlay, g);
  glUseProgram(0);
  glBindVertexArray(0);
}

/* The slice plane `plane` through the crosshair, spanning the scene box. */
static void plane_quad(NwScene *scene, NwPlane plane, float quad[12], float outline[24])
{
  int u, v, n;
  nw_plane_axes(plane, &u, &v, &n);
  double lo[3], hi[3], c[3];
  nw_scene_get_bounds(scene, lo, hi);
  nw_scene_get_crosshair(scene, c);
  static const int corner[4][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
  for (int k = 0; k < 4; k++) {
    quad[k * 3 + u] = (float)(corner[k][0] ? hi[u] : lo[u]);
    quad[k * 3 + v] = (float)(corner[k][1] ? hi[v] : lo[v]);
    quad[k * 3 + n] = (float)c[n];
  }
  static const int ring[8] = {0, 1, 1, 3, 3, 2, 2, 0};
  for (int k = 0; k < 8; k++)
    memcpy(outline + 3 * k, quad + 3 * ring[k], 3 * sizeof(float));
}

/* The orientation marker of the 3D view: the R (red), A (green) and S (blue) axes from a
 * point near the bottom-left corner, turned as the camera turns them (the rotation part of
 * view), each labelled at its tip; drawn in pixels over everything. */
static void draw_orientation_marker(NwViewGpu *gpu, const double view[16], int w, int h)
{
  static const float colors[3][4] = {
      {0.95f, 0.25f, 0.25f, 1.0f}, {0.25f, 0.85f, 0.25f, 1.0f}, {0.35f, 0.55f, 1.0f, 1.0f}};
  static const char letters[3] = {'R', 'A', 'S'};
  const double size = MAX(MIN(w, h) * 0.08, 16.0);
  const double cx = 14.0 + size, cy = h - 14.0 - size; /* pixels, top-left origin */
  /* pixels -> clip (row-major) */
  const double mvp[16] = {2.0 / w, 0, 0, -1, 0, -2.0 / h, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1};
  for (int a = 0; a < 3; a++) {
    /* the axis in eye space: column a of the view rotation; screen y points down */
    const double dx = view[0 * 4 + a], dy = -view[1 * 4 + a];
    const double len = MAX(sqrt(dx * dx + dy * dy), 1e-6);
    const double tx = cx + size * dx, ty = cy + size * dy, nx = -dy / len, ny = dx / len;
    float seg[18];
    for (int k = 0; k < 3; k++) { /* three pixels wide: core profile lines are one */
      const float o = (float)(k - 1);
      const float s[6] = {(float)(cx + o * nx), (float)(cy + o * ny), 0,
                          (float)(tx + o * nx), (float)(ty + o * ny), 0};
      memcpy(seg + 6 * k, s, sizeof s);
    }
    nw_render_lines(gpu->r, mvp, seg, 6, colors[a]);
    const NwSprite *sp = gpu->letters[strchr(letter_chars, letters[a]) - letter_chars];
    nw_render_sprite(gpu->r, sp, tx + 0.35 * size * dx - 0.5 * sp->width,
                     ty + 0.35 * size * dy - 0.5 * sp->height, w, h);
  }
}

void nw_view_render_3d(NwViewGpu *gpu, NwScene *scene, const NwOrbitCamera *cam)
{
  prune(gpu, scene);
  clear_view(cam->width, cam->height, TRUE);
  double view[16], mvp[16], eye[3], c[3];
  nw_orbit_camera_matrices(cam, view, mvp);
  nw_orbit_camera_eye(cam, eye);
  nw_scene_get_crosshair(scene, c);
  for (int p = 0; p < 3; p++) {
    float quad[12], outline[24];
    plane_quad(scene, (NwPlane)p, quad, outline);
    draw_volumes(gpu, scene, mvp, quad, cam->width, TRUE);
    nw_render_lines(gpu->r, mvp, outline, 8, nw_crosshair_color);
  }
  for (guint i = 0; i < nw_scene_n_layers(scene); i++) {
    NwLayer *l = nw_scene_get_layer(scene, i);
    if (!nw_layer_get_visible(l) || nw_layer_get_kind(l) != NW_LAYER_SURFACE)
      continue;
    const NwGlMesh *mesh = entry_mesh(entry_for(gpu, l));
    if (mesh == NULL || mesh->n_triangles == 0)
      continue;
    const NwSurface *surf = nw_layer_get_surface(l);
    const NwLayerStyle *style = nw_layer_get_style(l);
    const float *color = nw_layer_get_color(l);
    NwMeshStyle st = {.color = {color[0], color[1], color[2], 1.0f},
                      .use_scalars = surf != NULL && surf->scalars != NULL,
                      .colormap = style->colormap,
                      .lo = style->lo,
                      .hi = style->hi,
                      .opacity = style->opacity,
                      .cut = TRUE};
    /* open the octant facing the eye so the slice planes show inside the surface */
    for (int a = 0; a < 3; a++) {
      st.cut_center[a] = (float)c[a];
      st.cut_sign[a] = eye[a] >= c[a] ? 1.0f : -1.0f;
    }
    nw_render_mesh(gpu->r, mesh, view, mvp, &st);
  }
  glDisable(GL_DEPTH_TEST);
  draw_orientation_marker(gpu, view, cam->width, cam->height);
  glUseProgram(0);
  glBindVertexArray(0);
}
