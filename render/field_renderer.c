/* field_renderer.c — warped grid, arrows and heat maps of a displacement field (see
 * field_renderer.h). The CPU only lays out the undeformed grid points in the view plane;
 * the vertex shader (field_lines.vert) reads u from the texture and moves them, so a field
 * that a CUDA job writes into the same texture is drawn without a host copy.
 * Thread: the one with the GL context current. */
#include "field_renderer.h"

#include <math.h>

#include "nw_gl.h"
#include "view_geometry.h"

const float nw_fold_color[4] = {0.0f, 1.0f, 0.3f, 1.0f};

void nw_render_field_heat(NwRenderer *r, const double mvp[16], const float quad[12],
                          const NwGlVolume *field, NwFieldHeat kind, const NwLayerStyle *style)
{
  GLuint p = r->prog_heat;
  glUseProgram(p);
  nw_gl_set_mat4(p, "u_mvp", mvp);
  nw_gl_set_mat4(p, "u_ras_to_tex", field->ras_to_tex);
  nw_gl_set_mat4(p, "u_vox_to_ras", field->vox_to_ras);
  const float size[3] = {(float)field->nx, (float)field->ny, (float)field->nz};
  nw_gl_set_vec3(p, "u_size", size);
  nw_gl_bind_texture(p, "u_field", 0, GL_TEXTURE_3D, field->tex);
  nw_gl_bind_texture(p, "u_lut", 1, GL_TEXTURE_1D, r->lut[style->colormap]);
  nw_gl_set_int(p, "u_mode", kind == NW_FIELD_HEAT_LOG_JACOBIAN);
  nw_gl_set_float(p, "u_lo", style->lo);
  nw_gl_set_float(p, "u_hi", style->hi);
  nw_gl_set_float(p, "u_opacity", style->opacity);
  nw_gl_set_int(p, "u_clear_below", style->clear_below);
  float fold[4] = {nw_fold_color[0], nw_fold_color[1], nw_fold_color[2], style->opacity};
  nw_gl_set_vec4(p, "u_fold_color", fold);
  glEnable(GL_BLEND);
  glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
  float v[16];
  for (int c = 0; c < 4; c++) {
    for (int a = 0; a < 3; a++)
      v[c * 4 + a] = quad[c * 3 + a];
    v[c * 4 + 3] = 1.0f;
  }
  nw_renderer_stream(r, v, 4);
  glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
}

double nw_field_grid_step_mm(const NwGlVolume *field, int axis, int k_vox)
{
  int best = 0;
  double best_c = -1.0, spacing = 1.0;
  for (int c = 0; c < 3; c++) {
    double col = 0.0, comp = fabs(field->vox_to_ras[axis * 4 + c]);
    for (int rr = 0; rr < 3; rr++)
      col += field->vox_to_ras[rr * 4 + c] * field->vox_to_ras[rr * 4 + c];
    col = sqrt(col);
    if (col > 0.0 && comp / col > best_c) {
      best_c = comp / col;
      best = c;
      spacing = col;
    }
  }
  (void)best;
  return spacing * MAX(k_vox, 1);
}

/* World bounds of the field's voxel centres (grid lines run through voxel centres). */
static void centre_bounds(const NwGlVolume *f, double lo[3], double hi[3])
{
  NwVolume shape = {.nx = f->nx, .ny = f->ny, .nz = f->nz, .nc = 3};
  for (int i = 0; i < 16; i++)
    shape.vox_to_ras[i] = f->vox_to_ras[i];
  nw_volume_world_bounds(&shape, lo, hi); /* voxel edges; pull in by half a voxel */
  for (int a = 0; a < 3; a++) {
    double half = 0.5 * nw_field_grid_step_mm(f, a, 1);
    lo[a] += half;
    hi[a] -= half;
  }
}

static void push(GArray *a, double p0, double p1, double p2, float role, const int ax[3])
{
  float v[4];
  double p[3];
  p[ax[0]] = p0;
  p[ax[1]] = p1;
  p[ax[2]] = p2;
  for (int i = 0; i < 3; i++)
    v[i] = (float)p[i];
  v[3] = role;
  g_array_append_vals(a, v, 4);
}

static void setup_lines_program(NwRenderer *r, const NwSliceGeometry *g, const NwGlVolume *f,
                                float scale, float min_mm, const float rgba[4])
{
  GLuint p = r->prog_field_lines;
  double mvp[16];
  nw_slice_geometry_mvp(g, mvp);
  int u, v, n;
  nw_plane_axes(g->plane, &u, &v, &n);
  float normal[3] = {0, 0, 0};
  normal[n] = 1.0f;
  glUseProgram(p);
  nw_gl_set_mat4(p, "u_mvp", mvp);
  nw_gl_set_mat4(p, "u_ras_to_tex", f->ras_to_tex);
  nw_gl_set_mat4(p, "u_ras_to_vox", f->ras_to_vox);
  nw_gl_set_mat4(p, "u_vox_to_ras", f->vox_to_ras);
  nw_gl_set_float(p, "u_scale", scale);
  nw_gl_set_float(p, "u_min_mm", min_mm);
  nw_gl_set_vec3(p, "u_normal", normal);
  nw_gl_set_vec4(p, "u_color", rgba);
  nw_gl_bind_texture(p, "u_field", 0, GL_TEXTURE_3D, f->tex);
  glEnable(GL_BLEND);
  glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
}

/* Where the lines of a slice through the field go: the in-plane axes (u, v) and the normal
 * n, the bounds of the voxel centres, the slice's depth along n and the spacing of the lines
 * (every k_vox voxels, in mm). FALSE when the slice misses the field. */
typedef struct {
  int u, v, n;
  double lo[3], hi[3];
  double depth, step_u, step_v;
} SliceLines;

static gboolean slice_lines(const NwSliceGeometry *g, const NwGlVolume *field, int k_vox,
                            SliceLines *s)
{
  nw_plane_axes(g->plane, &s->u, &s->v, &s->n);
  centre_bounds(field, s->lo, s->hi);
  s->depth = g->center_ras[s->n];
  if (s->depth < s->lo[s->n] - 1e-6 || s->depth > s->hi[s->n] + 1e-6)
    return FALSE;
  s->step_u = nw_field_grid_step_mm(field, s->u, k_vox);
  s->step_v = nw_field_grid_step_mm(field, s->v, k_vox);
  return TRUE;
}

void nw_render_field_grid(NwRenderer *r, const NwSliceGeometry *g, const NwGlVolume *field,
                          int k_vox, float scale, const float rgba[4])
{
  SliceLines sl;
  if (!slice_lines(g, field, k_vox, &sl))
    return; /* the slice misses the field */
  const int u = sl.u, v = sl.v, n = sl.n;
  const double *lo = sl.lo, *hi = sl.hi, depth = sl.depth, step_u = sl.step_u, step_v = sl.step_v;
  double fine_u = nw_field_grid_step_mm(field, u, 1) * 0.5; /* segment length: half a voxel */
  double fine_v = nw_field_grid_step_mm(field, v, 1) * 0.5;
  const int ax[3] = {u, v, n};
  GArray *pts = g_array_new(FALSE, FALSE, sizeof(float));
  /* lines of constant v, running along u; then constant u along v */
  for (double pv = lo[v]; pv <= hi[v] + 1e-6; pv += step_v)
    for (double pu = lo[u]; pu + fine_u <= hi[u] + 1e-6; pu += fine_u) {
      push(pts, pu, pv, depth, -1.0f, ax);
      push(pts, pu + fine_u, pv, depth, -1.0f, ax);
    }
  for (double pu = lo[u]; pu <= hi[u] + 1e-6; pu += step_u)
    for (double pv = lo[v]; pv + fine_v <= hi[v] + 1e-6; pv += fine_v) {
      push(pts, pu, pv, depth, -1.0f, ax);
      push(pts, pu, pv + fine_v, depth, -1.0f, ax);
    }
  int nv = (int)(pts->len / 4);
  if (nv > 0) {
    setup_lines_program(r, g, field, scale, -1.0f, rgba);
    nw_renderer_stream(r, (const float *)(void *)pts->data, nv);
    glDrawArrays(GL_LINES, 0, nv);
  }
  g_array_free(pts, TRUE);
}

void nw_render_field_arrows(NwRenderer *r, const NwSliceGeometry *g, const NwGlVolume *field,
                            int k_vox, float scale, float min_mm, const float rgba[4])
{
  SliceLines sl;
  if (!slice_lines(g, field, k_vox, &sl))
    return;
  const int u = sl.u, v = sl.v, n = sl.n;
  const double *lo = sl.lo, *hi = sl.hi, depth = sl.depth, step_u = sl.step_u, step_v = sl.step_v;
  const int ax[3] = {u, v, n};
  static const float roles[6] = {0, 1, 1, 2, 1, 3}; /* shaft, barb, barb */
  GArray *pts = g_array_new(FALSE, FALSE, sizeof(float));
  for (double pv = lo[v]; pv <= hi[v] + 1e-6; pv += step_v)
    for (double pu = lo[u]; pu <= hi[u] + 1e-6; pu += step_u)
      for (int k = 0; k < 6; k++)
        push(pts, pu, pv, depth, roles[k], ax);
  int nv = (int)(pts->len / 4);
  if (nv > 0) {
    setup_lines_program(r, g, field, scale, min_mm, rgba);
    nw_renderer_stream(r, (const float *)(void *)pts->data, nv);
    glDrawArrays(GL_LINES, 0, nv);
  }
  g_array_free(pts, TRUE);
}
