/* renderer.c — programs, colour map textures, slice layers, comparisons, lines and sprites
 * (see renderer.h). Thread: the one with the GL context current. */
#include "renderer.h"

#include <math.h>
#include <string.h>

#include "nw_gl.h"

typedef struct {
  GLuint *prog;
  const char *vert, *frag;
} ProgramSpec;

NwRenderer *nw_renderer_new(GError **error)
{
  NwRenderer *r = g_new0(NwRenderer, 1);
  const ProgramSpec specs[] = {
      {&r->prog_slice, "slice.vert", "slice_layer.frag"},
      {&r->prog_compare, "slice.vert", "slice_compare.frag"},
      {&r->prog_heat, "slice.vert", "field_heat.frag"},
      {&r->prog_lines, "lines.vert", "lines.frag"},
      {&r->prog_field_lines, "field_lines.vert", "field_lines.frag"},
      {&r->prog_mesh, "mesh.vert", "mesh.frag"},
      {&r->prog_sprite, "sprite.vert", "sprite.frag"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(specs); i++) {
    *specs[i].prog = nw_gl_program_new(specs[i].vert, specs[i].frag, error);
    if (*specs[i].prog == 0) {
      nw_renderer_free(r);
      return NULL;
    }
  }
  glGenTextures(NW_COLORMAP_COUNT, r->lut);
  for (int m = 0; m < NW_COLORMAP_COUNT; m++) {
    guint8 rgba[NW_LUT_SIZE * 4];
    nw_colormap_fill((NwColormap)m, rgba);
    glBindTexture(GL_TEXTURE_1D, r->lut[m]);
    /* Linear between entries for smooth maps; the label map is read with texelFetch. */
    glTexParameteri(GL_TEXTURE_1D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_1D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_1D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexImage1D(GL_TEXTURE_1D, 0, GL_RGBA8, NW_LUT_SIZE, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
  }
  glGenVertexArrays(1, &r->vao);
  glGenVertexArrays(1, &r->mesh_vao);
  glGenBuffers(1, &r->vbo);
  glBindVertexArray(r->vao);
  glBindBuffer(GL_ARRAY_BUFFER, r->vbo);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 4, GL_FLOAT, GL_FALSE, 4 * sizeof(float), NULL);
  glBindVertexArray(0);
  return r;
}

void nw_renderer_free(NwRenderer *r)
{
  if (r == NULL)
    return;
  GLuint progs[] = {r->prog_slice,       r->prog_compare, r->prog_heat,  r->prog_lines,
                    r->prog_field_lines, r->prog_mesh,    r->prog_sprite};
  for (size_t i = 0; i < G_N_ELEMENTS(progs); i++)
    if (progs[i] != 0)
      glDeleteProgram(progs[i]);
  if (r->lut[0] != 0)
    glDeleteTextures(NW_COLORMAP_COUNT, r->lut);
  if (r->vbo != 0)
    glDeleteBuffers(1, &r->vbo);
  if (r->vao != 0)
    glDeleteVertexArrays(1, &r->vao);
  if (r->mesh_vao != 0)
    glDeleteVertexArrays(1, &r->mesh_vao);
  g_free(r);
}

void nw_renderer_stream(NwRenderer *r, const float *xyzw, int n)
{
  glBindVertexArray(r->vao);
  glBindBuffer(GL_ARRAY_BUFFER, r->vbo);
  glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)n * 4 * (GLsizeiptr)sizeof(float), xyzw,
               GL_STREAM_DRAW);
}

static void stream_quad(NwRenderer *r, const float quad[12])
{
  float v[16];
  for (int c = 0; c < 4; c++) {
    v[c * 4] = quad[c * 3];
    v[c * 4 + 1] = quad[c * 3 + 1];
    v[c * 4 + 2] = quad[c * 3 + 2];
    v[c * 4 + 3] = 1.0f;
  }
  nw_renderer_stream(r, v, 4);
}

static void blend_straight_alpha(void)
{
  glEnable(GL_BLEND);
  glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
}

void nw_render_slice_layer(NwRenderer *r, const double mvp[16], const float quad[12],
                           const NwGlVolume *vol, const NwLayerStyle *style)
{
  nw_render_slice_labels(r, mvp, quad, vol, style, 0);
}

GLuint nw_label_colors_new(const guint8 *rgba, int n_labels)
{
  const int rows = MAX((n_labels + 255) / 256, 1);
  g_autofree guint8 *full = g_malloc0((size_t)rows * 256 * 4);
  memcpy(full, rgba, (size_t)n_labels * 4);
  GLuint tex;
  glGenTextures(1, &tex);
  glBindTexture(GL_TEXTURE_2D, tex);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, 256, rows, 0, GL_RGBA, GL_UNSIGNED_BYTE, full);
  return tex;
}

void nw_render_slice_labels(NwRenderer *r, const double mvp[16], const float quad[12],
                            const NwGlVolume *vol, const NwLayerStyle *style, GLuint label_colors)
{
  GLuint p = r->prog_slice;
  glUseProgram(p);
  nw_gl_set_mat4(p, "u_mvp", mvp);
  nw_gl_set_mat4(p, "u_ras_to_tex", vol->ras_to_tex);
  nw_gl_bind_texture(p, "u_vol", 0, GL_TEXTURE_3D, vol->tex);
  nw_gl_bind_texture(p, "u_lut", 1, GL_TEXTURE_1D, r->lut[style->colormap]);
  nw_gl_set_float(p, "u_lo", style->lo);
  nw_gl_set_float(p, "u_hi", style->hi);
  nw_gl_set_float(p, "u_opacity", style->opacity);
  nw_gl_set_int(p, "u_label", style->colormap == NW_COLORMAP_LABEL);
  nw_gl_set_int(p, "u_clear_below", style->clear_below);
  nw_gl_set_int(p, "u_clear_centre", style->clear_centre);
  /* a sampler of its own unit even when unused: samplers of two types on one unit fail */
  nw_gl_bind_texture(p, "u_label_colors", 2, GL_TEXTURE_2D, label_colors);
  nw_gl_set_int(p, "u_label_table", label_colors != 0);
  blend_straight_alpha();
  stream_quad(r, quad);
  glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
}

static const char *const compare_names[NW_COMPARE_COUNT] = {"none",       "blend",   "checker",
                                                            "difference", "flicker", "curtain"};

const char *nw_compare_mode_name(NwCompareMode m)
{
  return m < NW_COMPARE_COUNT ? compare_names[m] : "?";
}

gboolean nw_compare_mode_from_name(const char *name, NwCompareMode *m)
{
  for (int i = 0; i < NW_COMPARE_COUNT; i++)
    if (g_ascii_strcasecmp(name, compare_names[i]) == 0) {
      *m = (NwCompareMode)i;
      return TRUE;
    }
  return FALSE;
}

void nw_compare_style_init(NwCompareStyle *c)
{
  c->mode = NW_COMPARE_BLEND;
  c->magenta_green = TRUE;
  c->blend = 0.5f;
  c->tile_mm = 16.0f;
  c->diff_range = 0.0f; /* 0: the caller derives it from A's window */
  c->show_b = FALSE;
  c->curtain = 0.5f;
}

void nw_render_slice_compare(NwRenderer *r, const double mvp[16], const float quad[12],
                             const NwGlVolume *a, const NwLayerStyle *sa, const NwGlVolume *b,
                             const NwLayerStyle *sb, const NwCompareStyle *cmp, int viewport_w)
{
  GLuint p = r->prog_compare;
  glUseProgram(p);
  nw_gl_set_mat4(p, "u_mvp", mvp);
  nw_gl_set_mat4(p, "u_ras_to_tex_a", a->ras_to_tex);
  nw_gl_set_mat4(p, "u_ras_to_tex_b", b->ras_to_tex);
  nw_gl_bind_texture(p, "u_vol_a", 0, GL_TEXTURE_3D, a->tex);
  nw_gl_bind_texture(p, "u_vol_b", 1, GL_TEXTURE_3D, b->tex);
  nw_gl_bind_texture(p, "u_lut_a", 2, GL_TEXTURE_1D, r->lut[sa->colormap]);
  nw_gl_bind_texture(p, "u_lut_b", 3, GL_TEXTURE_1D, r->lut[sb->colormap]);
  nw_gl_bind_texture(p, "u_lut_diff", 4, GL_TEXTURE_1D, r->lut[NW_COLORMAP_DIVERGING]);
  nw_gl_set_vec2(p, "u_range_a", sa->lo, sa->hi);
  nw_gl_set_vec2(p, "u_range_b", sb->lo, sb->hi);
  nw_gl_set_float(p, "u_opacity_a", sa->opacity);
  nw_gl_set_float(p, "u_opacity_b", sb->opacity);
  int mode = cmp->mode == NW_COMPARE_NONE ? NW_COMPARE_BLEND : cmp->mode;
  nw_gl_set_int(p, "u_mode", mode);
  nw_gl_set_int(p, "u_magenta_green", cmp->magenta_green);
  nw_gl_set_float(p, "u_blend", cmp->blend);
  nw_gl_set_float(p, "u_tile_mm", cmp->tile_mm);
  float dr = cmp->diff_range > 0.0f ? cmp->diff_range : 0.5f * (sa->hi - sa->lo);
  nw_gl_set_float(p, "u_diff_range", dr);
  nw_gl_set_int(p, "u_show_b", cmp->show_b);
  nw_gl_set_int(p, "u_clear_below", sa->clear_below && sb->clear_below);
  nw_gl_set_float(p, "u_curtain_px", cmp->curtain * (float)viewport_w);
  blend_straight_alpha();
  stream_quad(r, quad);
  glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
}

void nw_render_lines(NwRenderer *r, const double mvp[16], const float *xyz, int n_vertices,
                     const float rgba[4])
{
  if (n_vertices < 2)
    return;
  float *v = g_new(float, (size_t)n_vertices * 4);
  for (int i = 0; i < n_vertices; i++) {
    v[i * 4] = xyz[i * 3];
    v[i * 4 + 1] = xyz[i * 3 + 1];
    v[i * 4 + 2] = xyz[i * 3 + 2];
    v[i * 4 + 3] = 1.0f;
  }
  GLuint p = r->prog_lines;
  glUseProgram(p);
  nw_gl_set_mat4(p, "u_mvp", mvp);
  nw_gl_set_vec4(p, "u_color", rgba);
  blend_straight_alpha();
  nw_renderer_stream(r, v, n_vertices);
  glDrawArrays(GL_LINES, 0, n_vertices);
  g_free(v);
}

NwSprite *nw_sprite_new(const guint8 *bgra, int width, int height, int stride)
{
  NwSprite *s = g_new0(NwSprite, 1);
  s->width = width;
  s->height = height;
  glGenTextures(1, &s->tex);
  glBindTexture(GL_TEXTURE_2D, s->tex);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, stride / 4);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, width, height, 0, GL_BGRA, GL_UNSIGNED_BYTE, bgra);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  return s;
}

void nw_sprite_free(NwSprite *s)
{
  if (s == NULL)
    return;
  glDeleteTextures(1, &s->tex);
  g_free(s);
}

void nw_render_sprite(NwRenderer *r, const NwSprite *s, double x, double y, int vw, int vh)
{
  /* Whole pixels, so text stays crisp with nearest sampling. */
  float x0 = (float)floor(x), y0 = (float)floor(y);
  float x1 = x0 + (float)s->width, y1 = y0 + (float)s->height;
  const float v[16] = {x0, y0, 0, 0, x1, y0, 1, 0, x0, y1, 0, 1, x1, y1, 1, 1};
  GLuint p = r->prog_sprite;
  glUseProgram(p);
  nw_gl_set_vec2(p, "u_viewport", (float)vw, (float)vh);
  nw_gl_bind_texture(p, "u_image", 0, GL_TEXTURE_2D, s->tex);
  glEnable(GL_BLEND);
  glBlendFunc(GL_ONE, GL_ONE_MINUS_SRC_ALPHA); /* premultiplied */
  nw_renderer_stream(r, v, 4);
  glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
}
