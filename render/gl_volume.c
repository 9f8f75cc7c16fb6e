/* gl_volume.c — volumes as 3D textures (see gl_volume.h). Thread with the GL context. */
#include "gl_volume.h"

#include <string.h>

#include "nw_error.h"
#include "nw_mat4.h"

static void set_geometry(NwGlVolume *g, const NwVolume *v)
{
  g->nx = v->nx;
  g->ny = v->ny;
  g->nz = v->nz;
  g->nc = v->nc;
  for (int i = 0; i < 16; i++)
    g->vox_to_ras[i] = v->vox_to_ras[i];
  if (!nw_mat4_invert(g->ras_to_vox, g->vox_to_ras))
    nw_mat4_identity(g->ras_to_vox);
  /* tex = (vox + 0.5) / n per axis */
  double st[16];
  nw_mat4_identity(st);
  int n[3] = {v->nx, v->ny, v->nz};
  for (int a = 0; a < 3; a++) {
    st[a * 4 + a] = 1.0 / n[a];
    st[a * 4 + 3] = 0.5 / n[a];
  }
  nw_mat4_mul(g->ras_to_tex, st, g->ras_to_vox);
}

static GLenum internal_format(int nc)
{
  return nc == 4 ? GL_RGBA32F : nc == 3 ? GL_RGB32F : GL_R32F;
}

static GLenum pixel_format(int nc)
{
  return nc == 4 ? GL_RGBA : nc == 3 ? GL_RGB : GL_RED;
}

/* A 3D texture of v's size and format with data (NULL: undefined contents). */
static NwGlVolume *make_texture(const NwVolume *v, const float *data, gboolean nearest,
                                GError **error)
{
  GLint max3d = 0;
  glGetIntegerv(GL_MAX_3D_TEXTURE_SIZE, &max3d);
  if (v->nx > max3d || v->ny > max3d || v->nz > max3d) {
    g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED,
                "volume of %dx%dx%d voxels: larger than this GPU's 3D texture limit %d", v->nx,
                v->ny, v->nz, max3d);
    return NULL;
  }
  NwGlVolume *g = g_new0(NwGlVolume, 1);
  set_geometry(g, v);
  g->owns_tex = TRUE;
  glGetError();
  glGenTextures(1, &g->tex);
  glBindTexture(GL_TEXTURE_3D, g->tex);
  GLint filter = nearest ? GL_NEAREST : GL_LINEAR;
  glTexParameteri(GL_TEXTURE_3D, GL_TEXTURE_MIN_FILTER, filter);
  glTexParameteri(GL_TEXTURE_3D, GL_TEXTURE_MAG_FILTER, filter);
  glTexParameteri(GL_TEXTURE_3D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_3D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_3D, GL_TEXTURE_WRAP_R, GL_CLAMP_TO_EDGE);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glTexImage3D(GL_TEXTURE_3D, 0, (GLint)internal_format(v->nc), v->nx, v->ny, v->nz, 0,
               pixel_format(v->nc), GL_FLOAT, data);
  GLenum err = glGetError();
  if (err != GL_NO_ERROR) {
    g_set_error(error, NW_ERROR, NW_ERROR_NOMEM,
                "volume of %dx%dx%d voxels: the GPU refused the texture (GL error 0x%x)", v->nx,
                v->ny, v->nz, err);
    nw_gl_volume_free(g);
    return NULL;
  }
  glFlush(); /* the other views' contexts (one share group) see it once flushed */
  return g;
}

NwGlVolume *nw_gl_volume_new(const NwVolume *v, gboolean nearest, GError **error)
{
  if (v->nc != 1 && v->nc != 3 && v->nc != 4) {
    g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED,
                "volume with %d components per voxel: only 1 (image) or 3 or 4 (field) can be shown",
                v->nc);
    return NULL;
  }
  return make_texture(v, v->data, nearest, error);
}

NwGlVolume *nw_gl_volume_new_empty(int nx, int ny, int nz, int nc, const double vox_to_ras[16],
                                   GError **error)
{
  if ((nc != 1 && nc != 4) || nx < 1 || ny < 1 || nz < 1) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "texture of %dx%dx%d voxels with %d components: expected 1 or 4 components",
                nx, ny, nz, nc);
    return NULL;
  }
  NwVolume shape = {.nx = nx, .ny = ny, .nz = nz, .nc = nc};
  memcpy(shape.vox_to_ras, vox_to_ras, sizeof shape.vox_to_ras);
  return make_texture(&shape, NULL, FALSE, error);
}

void nw_gl_volume_update(NwGlVolume *g, const NwVolume *v)
{
  g_return_if_fail(v->nx == g->nx && v->ny == g->ny && v->nz == g->nz && v->nc == g->nc);
  glBindTexture(GL_TEXTURE_3D, g->tex);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glTexSubImage3D(GL_TEXTURE_3D, 0, 0, 0, 0, v->nx, v->ny, v->nz, pixel_format(v->nc), GL_FLOAT,
                  v->data);
  glFlush();
}

NwGlVolume *nw_gl_volume_wrap(GLuint tex, const NwVolume *like)
{
  NwGlVolume *g = g_new0(NwGlVolume, 1);
  set_geometry(g, like);
  g->tex = tex;
  g->owns_tex = FALSE;
  return g;
}

void nw_gl_volume_free(NwGlVolume *g)
{
  if (g == NULL)
    return;
  if (g->owns_tex && g->tex != 0)
    glDeleteTextures(1, &g->tex);
  g_free(g);
}
