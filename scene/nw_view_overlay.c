/* nw_view_overlay.c — colour bars and scale bar of a 2D view (see nw_view_overlay.h).
 * Main thread; the sprites with the view's GL context current. */
#include "nw_view_overlay.h"

#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum {
  MARGIN = 8,                               /* from the view's edges */
  STRIP_H = 10,                             /* colour bar strip height */
  TEXT_H = 14,                              /* a line of the bars' text */
  PAD = 2,                                  /* sprite border around strip and text (the outline) */
  BAR_STEP = TEXT_H + STRIP_H + TEXT_H + 6, /* one bar above the next */
  SCALE_H = 4,                              /* the scale bar's thickness */
};

/* The colour bar of a layer drawn through a continuous map; FALSE when it has none. */
static gboolean layer_bar(NwLayer *l, NwColorBar *bar)
{
  const NwLayerStyle *st = nw_layer_get_style(l);
  const NwLayerKind kind = nw_layer_get_kind(l);
  if (!nw_layer_get_visible(l) || kind == NW_LAYER_SURFACE || kind == NW_LAYER_LABELS)
    return FALSE;
  if (kind == NW_LAYER_FIELD) {
    const NwFieldShow show = nw_layer_get_field_show(l);
    if (show != NW_FIELD_SHOW_MAGNITUDE && show != NW_FIELD_SHOW_LOG_JACOBIAN)
      return FALSE; /* grid and arrows are drawn in one colour */
    g_snprintf(bar->title, sizeof bar->title, "%s: %s", nw_layer_get_name(l),
               show == NW_FIELD_SHOW_MAGNITUDE ? "|u| (mm)" : "log det J");
  } else if (st->colormap == NW_COLORMAP_GREY) {
    return FALSE; /* anatomy: its window is in the layer list */
  } else {
    g_strlcpy(bar->title, nw_layer_get_name(l), sizeof bar->title);
  }
  bar->colormap = st->colormap;
  bar->lo = st->lo;
  bar->hi = st->hi;
  return TRUE;
}

double nw_scale_bar_mm(double mm_per_pixel, double max_px)
{
  const double max_mm = mm_per_pixel * max_px;
  if (!(max_mm > 0.0))
    return 0.0;
  const double decade = pow(10.0, floor(log10(max_mm)));
  static const double steps[] = {5.0, 2.0, 1.0};
  for (int i = 0; i < 3; i++)
    if (steps[i] * decade <= max_mm)
      return steps[i] * decade;
  return decade;
}

void nw_view_overlay_layout(NwScene *scene, const NwSliceGeometry *g, NwOverlayLayout *out)
{
  memset(out, 0, sizeof *out);
  const int w = g->width, h = g->height;
  const NwCompareStyle *cmp = nw_scene_get_compare(scene);
  NwLayer *a = nw_scene_get_compare_a(scene);
  if (nw_scene_comparing(scene) && cmp->mode == NW_COMPARE_DIFFERENCE) {
    /* the compare shader's range: diff_range, else half of A's window (renderer.c) */
    const NwLayerStyle *sa = nw_layer_get_style(a);
    const float dr = cmp->diff_range > 0.0f ? cmp->diff_range : 0.5f * (sa->hi - sa->lo);
    NwColorBar *bar = &out->bars[out->n_bars++];
    g_strlcpy(bar->title, "A − B", sizeof bar->title);
    bar->colormap = NW_COLORMAP_DIVERGING;
    bar->lo = -dr;
    bar->hi = dr;
  }
  for (guint k = nw_scene_n_layers(scene); k-- > 0 && out->n_bars < NW_OVERLAY_MAX_BARS;)
    if (layer_bar(nw_scene_get_layer(scene, k), &out->bars[out->n_bars]))
      out->n_bars++;
  const int strip_w = CLAMP(w * 3 / 10, 60, 200);
  for (int i = 0; i < out->n_bars; i++) {
    NwPixelRect *s = &out->bars[i].strip;
    s->width = strip_w;
    s->height = STRIP_H;
    s->x = w - MARGIN - PAD - strip_w;
    s->y = h - MARGIN - PAD - TEXT_H - STRIP_H - i * BAR_STEP;
  }
  out->scale_mm = nw_scale_bar_mm(g->mm_per_pixel, 0.25 * w);
  if (out->scale_mm > 0.0) {
    out->scale.width = (int)lround(out->scale_mm / g->mm_per_pixel);
    out->scale.height = SCALE_H;
    out->scale.x = MARGIN + PAD;
    out->scale.y = h - MARGIN - PAD - SCALE_H;
  }
}

/* ---- sprites ---- */

typedef struct {
  char key[160]; /* what the sprite shows: remade when it changes */
  NwSprite *sprite;
  int strip_x; /* where the bar's strip starts inside the sprite */
} CachedSprite;

struct NwViewOverlay {
  CachedSprite bars[NW_OVERLAY_MAX_BARS];
  CachedSprite scale;
};

NwViewOverlay *nw_view_overlay_new(void)
{
  return g_new0(NwViewOverlay, 1);
}

void nw_view_overlay_free(NwViewOverlay *ov)
{
  if (ov == NULL)
    return;
  for (int i = 0; i < NW_OVERLAY_MAX_BARS; i++)
    nw_sprite_free(ov->bars[i].sprite);
  nw_sprite_free(ov->scale.sprite);
  g_free(ov);
}

static void sprite_from_cairo(CachedSprite *c, cairo_surface_t *cs, const char *key)
{
  cairo_surface_flush(cs);
  nw_sprite_free(c->sprite);
  c->sprite = nw_sprite_new(cairo_image_surface_get_data(cs), cairo_image_surface_get_width(cs),
                            cairo_image_surface_get_height(cs), cairo_image_surface_get_stride(cs));
  g_strlcpy(c->key, key, sizeof c->key);
  cairo_surface_destroy(cs);
}

void nw_overlay_outline_fill(cairo_t *cr, double outline, double r, double g, double b)
{
  cairo_set_source_rgba(cr, 0, 0, 0, 0.85);
  cairo_set_line_width(cr, outline);
  cairo_stroke_preserve(cr);
  cairo_set_source_rgb(cr, r, g, b);
  cairo_fill(cr);
}

static void set_font(cairo_t *cr)
{
  cairo_select_font_face(cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
  cairo_set_font_size(cr, 11);
}

/* Pixels text needs across, its outline included. */
static int text_width(const char *text)
{
  cairo_surface_t *cs = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t *cr = cairo_create(cs);
  set_font(cr);
  cairo_text_extents_t ext;
  cairo_text_extents(cr, text, &ext);
  cairo_destroy(cr);
  cairo_surface_destroy(cs);
  return (int)ceil(ext.x_advance) + 2;
}

/* Light text with a dark outline, readable on any image; x is the left, centre or right
 * of the text for align 0, 0.5, 1; y its top. */
static void outlined_text(cairo_t *cr, const char *text, double x, double y, double align)
{
  set_font(cr);
  cairo_text_extents_t ext;
  cairo_text_extents(cr, text, &ext);
  cairo_move_to(cr, round(x - align * ext.x_advance), round(y + 11));
  cairo_text_path(cr, text);
  nw_overlay_outline_fill(cr, 2.5, 0.95, 0.95, 0.95);
}

static void format_value(char *buf, size_t n, float v)
{
  g_snprintf(buf, n, "%.3g", fabs(v) < 1e-6f ? 0.0 : (double)v);
}

/* Title above the strip (right-aligned with it, the sprite wider where the title is), the
 * LUT across it (the entries the views use), lo, middle and hi below; the strip sits at
 * (c->strip_x, PAD + TEXT_H) inside the sprite. */
static void make_bar(CachedSprite *c, const NwColorBar *bar, const char *key)
{
  const int sw = bar->strip.width, x0 = MAX(PAD, text_width(bar->title) + PAD - sw);
  const int w = x0 + sw + PAD, h = 2 * PAD + TEXT_H + STRIP_H + TEXT_H;
  cairo_surface_t *cs = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
  guint8 lut[NW_LUT_SIZE * 4];
  nw_colormap_fill(bar->colormap, lut);
  guint8 *px = cairo_image_surface_get_data(cs);
  const int stride = cairo_image_surface_get_stride(cs);
  for (int y = PAD + TEXT_H - 1; y <= PAD + TEXT_H + STRIP_H; y++)
    for (int x = x0 - 1; x <= x0 + sw; x++) {
      guint32 *p = (guint32 *)(void *)(px + (size_t)y * stride + (size_t)x * 4);
      const gboolean inside =
          y >= PAD + TEXT_H && y < PAD + TEXT_H + STRIP_H && x >= x0 && x < x0 + sw;
      const int e = inside ? (int)lround(255.0 * (x - x0) / MAX(sw - 1, 1)) : 0;
      /* opaque: the LUT entry inside, the dark outline around */
      *p = inside ? 0xff000000u | (guint32)lut[e * 4] << 16 | (guint32)lut[e * 4 + 1] << 8 |
                        lut[e * 4 + 2]
                  : 0xff000000u;
    }
  cairo_surface_mark_dirty(cs);
  cairo_t *cr = cairo_create(cs);
  outlined_text(cr, bar->title, w - PAD, 0, 1.0);
  char lo[32], mid[32], hi[32];
  format_value(lo, sizeof lo, bar->lo);
  format_value(mid, sizeof mid, 0.5f * (bar->lo + bar->hi));
  format_value(hi, sizeof hi, bar->hi);
  const double ty = PAD + TEXT_H + STRIP_H + 1;
  outlined_text(cr, lo, x0, ty, 0.0);
  outlined_text(cr, mid, x0 + 0.5 * sw, ty, 0.5);
  outlined_text(cr, hi, x0 + sw, ty, 1.0);
  cairo_destroy(cr);
  sprite_from_cairo(c, cs, key);
  c->strip_x = x0;
}

/* "20 mm" above a white bar of the layout's length with a dark outline; the bar sits at
 * (PAD, h - PAD - SCALE_H) inside the sprite. */
static void make_scale(CachedSprite *c, const NwOverlayLayout *lay, const char *key)
{
  char text[32];
  g_snprintf(text, sizeof text, "%g mm", lay->scale_mm);
  const int w = MAX(lay->scale.width, 48) + 2 * PAD, h = TEXT_H + SCALE_H + 2 * PAD;
  cairo_surface_t *cs = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
  cairo_t *cr = cairo_create(cs);
  cairo_set_source_rgba(cr, 0, 0, 0, 0.85);
  cairo_rectangle(cr, PAD - 1, h - PAD - SCALE_H - 1, lay->scale.width + 2, SCALE_H + 2);
  cairo_fill(cr);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_rectangle(cr, PAD, h - PAD - SCALE_H, lay->scale.width, SCALE_H);
  cairo_fill(cr);
  outlined_text(cr, text, PAD, 0, 0.0);
  cairo_destroy(cr);
  sprite_from_cairo(c, cs, key);
}

void nw_view_overlay_draw(NwViewOverlay *ov, NwRenderer *r, const NwOverlayLayout *lay,
                          const NwSliceGeometry *g)
{
  char key[160];
  for (int i = 0; i < lay->n_bars; i++) {
    const NwColorBar *bar = &lay->bars[i];
    g_snprintf(key, sizeof key, "%s|%d|%.6g|%.6g|%d", bar->title, bar->colormap, bar->lo, bar->hi,
               bar->strip.width);
    CachedSprite *c = &ov->bars[i];
    if (c->sprite == NULL || strcmp(c->key, key) != 0)
      make_bar(c, bar, key);
    nw_render_sprite(r, c->sprite, bar->strip.x - c->strip_x, bar->strip.y - PAD - TEXT_H, g->width,
                     g->height);
  }
  if (lay->scale_mm > 0.0) {
    g_snprintf(key, sizeof key, "%g|%d", lay->scale_mm, lay->scale.width);
    if (ov->scale.sprite == NULL || strcmp(ov->scale.key, key) != 0)
      make_scale(&ov->scale, lay, key);
    nw_render_sprite(r, ov->scale.sprite, lay->scale.x - PAD,
                     lay->scale.y + SCALE_H + PAD - ov->scale.sprite->height, g->width, g->height);
  }
}
