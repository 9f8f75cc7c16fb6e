/* mesh_renderer.c — mesh buffers, lit drawing and plane contours (see mesh_renderer.h).
 * Thread: the one with the GL context current; nw_surface_plane_contour any thread. */
#include "mesh_renderer.h"

#include "nw_error.h"
#include "nw_gl.h"

static GLuint buffer(GLenum target, gsize bytes, const void *data)
{
  GLuint b;
  glGenBuffers(1, &b);
  glBindBuffer(target, b);
  glBufferData(target, (GLsizeiptr)bytes, data, GL_STATIC_DRAW);
  return b;
}

NwGlMesh *nw_gl_mesh_new(const NwSurface *s, GError **error)
{
  if (s->n_vertices <= 0 || s->n_triangles <= 0) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "mesh with %d vertices and %d triangles: "
                "nothing to draw",
                s->n_vertices, s->n_triangles);
    return NULL;
  }
  g_autoptr(NwSurface) lit = NULL;
  const float *normals = s->normals;
  if (normals == NULL) {
    lit = nw_surface_copy(s);
    nw_surface_compute_normals(lit);
    normals = lit->normals;
  }
  NwGlMesh *m = g_new0(NwGlMesh, 1);
  m->n_triangles = s->n_triangles;
  gsize nv = (gsize)s->n_vertices;
  m->vbo_pos = buffer(GL_ARRAY_BUFFER, nv * 3 * sizeof(float), s->vertices);
  m->vbo_normal = buffer(GL_ARRAY_BUFFER, nv * 3 * sizeof(float), normals);
  if (s->scalars != NULL) {
    m->has_scalars = TRUE;
    m->scalar_min = m->scalar_max = s->scalars[0];
    for (gsize i = 1; i < nv; i++) {
      m->scalar_min = MIN(m->scalar_min, s->scalars[i]);
      m->scalar_max = MAX(m->scalar_max, s->scalars[i]);
    }
    m->vbo_scalar = buffer(GL_ARRAY_BUFFER, nv * sizeof(float), s->scalars);
  }
  /* the element buffer binding belongs to the bound vertex array: bind none while making it */
  glBindVertexArray(0);
  m->ibo =
      buffer(GL_ELEMENT_ARRAY_BUFFER, (gsize)s->n_triangles * 3 * sizeof(guint32), s->triangles);
  glBindBuffer(GL_ARRAY_BUFFER, 0);
  glFlush(); /* other contexts of the share group see the data once it is flushed */
  return m;
}

NwGlMesh *nw_gl_mesh_new_soup(size_t max_triangles, GError **error)
{
  const size_t tri_bytes = 3 * NW_GL_MESH_SOUP_FLOATS * sizeof(float);
  if (max_triangles == 0 || max_triangles > (size_t)G_MAXINT32 / 3 ||
      max_triangles > G_MAXSIZE / tri_bytes) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "soup mesh of %zu triangles: bad size",
                max_triangles);
    return NULL;
  }
  NwGlMesh *m = g_new0(NwGlMesh, 1);
  m->soup = TRUE;
  m->max_triangles = max_triangles;
  glGetError();
  glGenBuffers(1, &m->vbo_pos);
  glBindBuffer(GL_ARRAY_BUFFER, m->vbo_pos);
  glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(max_triangles * tri_bytes), NULL, GL_DYNAMIC_DRAW);
  glBindBuffer(GL_ARRAY_BUFFER, 0);
  GLenum err = glGetError();
  if (err != GL_NO_ERROR) {
    g_set_error(error, NW_ERROR, NW_ERROR_NOMEM,
                "soup mesh of %zu triangles: the GPU refused the buffer (GL error 0x%x)",
                max_triangles, err);
    nw_gl_mesh_free(m);
    return NULL;
  }
  return m;
}

void nw_gl_mesh_free(NwGlMesh *m)
{
  if (m == NULL)
    return;
  GLuint b[] = {m->vbo_pos, m->vbo_normal, m->vbo_scalar, m->ibo};
  for (size_t i = 0; i < G_N_ELEMENTS(b); i++)
    if (b[i] != 0)
      glDeleteBuffers(1, &b[i]);
  g_free(m);
}

/* This context's mesh vertex array, pointed at m's buffers: attribute 0 position, 1 normal,
 * 2 scalar (a constant 0 without scalars). */
static void bind_mesh(NwRenderer *r, const NwGlMesh *m)
{
  glBindVertexArray(r->mesh_vao);
  const GLsizei stride = m->soup ? NW_GL_MESH_SOUP_FLOATS * sizeof(float) : 0;
  glBindBuffer(GL_ARRAY_BUFFER, m->vbo_pos);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, stride, NULL);
  glBindBuffer(GL_ARRAY_BUFFER, m->soup ? m->vbo_pos : m->vbo_normal);
  glEnableVertexAttribArray(1);
  glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, stride,
                        (const void *)(m->soup ? 3 * sizeof(float) : 0));
  if (m->vbo_scalar != 0) {
    glBindBuffer(GL_ARRAY_BUFFER, m->vbo_scalar);
    glEnableVertexAttribArray(2);
    glVertexAttribPointer(2, 1, GL_FLOAT, GL_FALSE, 0, NULL);
  } else {
    glDisableVertexAttribArray(2);
    glVertexAttrib1f(2, 0.0f);
  }
  glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, m->soup ? 0 : m->ibo);
  glBindBuffer(GL_ARRAY_BUFFER, 0);
}

void nw_render_mesh(NwRenderer *r, const NwGlMesh *m, const double view[16], const double mvp[16],
                    const NwMeshStyle *style)
{
  GLuint p = r->prog_mesh;
  glUseProgram(p);
  nw_gl_set_mat4(p, "u_mvp", mvp);
  nw_gl_set_mat4(p, "u_view", view);
  nw_gl_set_vec4(p, "u_color", style->color);
  nw_gl_set_int(p, "u_use_scalars", style->use_scalars && m->has_scalars);
  nw_gl_set_float(p, "u_lo", style->lo);
  nw_gl_set_float(p, "u_hi", style->hi);
  nw_gl_set_float(p, "u_opacity", style->opacity);
  nw_gl_set_int(p, "u_cut", style->cut);
  nw_gl_set_vec3(p, "u_cut_center", style->cut_center);
  nw_gl_set_vec3(p, "u_cut_sign", style->cut_sign);
  nw_gl_bind_texture(p, "u_lut", 0, GL_TEXTURE_1D, r->lut[style->colormap]);
  if (style->opacity < 1.0f) {
    glEnable(GL_BLEND);
    glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
  } else {
    glDisable(GL_BLEND);
  }
  bind_mesh(r, m);
  if (m->soup)
    glDrawArrays(GL_TRIANGLES, 0, m->n_triangles * 3);
  else
    glDrawElements(GL_TRIANGLES, m->n_triangles * 3, GL_UNSIGNED_INT, NULL);
  glBindVertexArray(0);
}

/* Point where the edge a-b crosses the plane (da, db: signed distances, opposite signs). */
static void crossing(const float *a, const float *b, double da, double db, float out[3])
{
  double t = da / (da - db);
  for (int i = 0; i < 3; i++)
    out[i] = (float)(a[i] + t * (b[i] - a[i]));
}

int nw_surface_plane_contour(const NwSurface *s, int axis, double depth, GArray *out)
{
  int n = 0;
  for (int t = 0; t < s->n_triangles; t++) {
    const float *p[3];
    double d[3];
    for (int c = 0; c < 3; c++) {
      guint32 vi = s->triangles[t * 3 + c];
      p[c] = s->vertices + (gsize)vi * 3;
      /* a vertex exactly on the plane counts as above, so each crossing is found once */
      d[c] = p[c][axis] - depth;
      if (d[c] == 0.0)
        d[c] = 1e-12;
    }
    float seg[6];
    int k = 0;
    for (int e = 0; e < 3 && k < 2; e++) {
      int a = e, b = (e + 1) % 3;
      if ((d[a] < 0.0) != (d[b] < 0.0))
        crossing(p[a], p[b], d[a], d[b], seg + 3 * k++);
    }
    if (k == 2) {
      g_array_append_vals(out, seg, 6);
      n++;
    }
  }
  return n;
}
