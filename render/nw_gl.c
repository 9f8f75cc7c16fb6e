/* nw_gl.c — GLEW start-up, shader programs from the GResource bundle, uniforms by name,
 * read-back and offscreen targets. Thread: whichever thread has the GL context current. */
#include "nw_gl.h"

#include <string.h>

#include "nw_error.h"
#include "render_resources.h"

gboolean nw_gl_init(GError **error)
{
  glewExperimental = GL_TRUE;
  GLenum status = glewInit();
  /* In an EGL context GLEW's GLX probe fails with NO_GLX_DISPLAY after it loaded the core
   * entry points; the entry point check below decides. */
#ifdef GLEW_ERROR_NO_GLX_DISPLAY
  if (status == GLEW_ERROR_NO_GLX_DISPLAY)
    status = GLEW_OK;
#endif
  if (status != GLEW_OK || glCreateShader == NULL || glGenVertexArrays == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED,
                "OpenGL: GLEW could not load the entry "
                "points (%s)",
                (const char *)glewGetErrorString(status));
    return FALSE;
  }
  glGetError(); /* GLEW may leave GL_INVALID_ENUM behind in core profiles */
  GLint major = 0, minor = 0;
  glGetIntegerv(GL_MAJOR_VERSION, &major);
  glGetIntegerv(GL_MINOR_VERSION, &minor);
  if (major * 10 + minor < 33) {
    g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED,
                "OpenGL %d.%d: neurowarp needs OpenGL 3.3 core (%s)", major, minor,
                (const char *)glGetString(GL_RENDERER));
    return FALSE;
  }
  return TRUE;
}

static GBytes *shader_source(const char *name, GError **error)
{
  g_autofree char *path = g_strconcat("/org/neurowarp/shaders/", name, NULL);
  return g_resource_lookup_data(nw_render_get_resource(), path, G_RESOURCE_LOOKUP_FLAGS_NONE,
                                error);
}

static GLuint compile(GLenum type, const char *name, GError **error)
{
  g_autoptr(GBytes) src = shader_source(name, error);
  if (src == NULL)
    return 0;
  gsize len = 0;
  const char *text = g_bytes_get_data(src, &len);
  GLint glen = (GLint)len;
  GLuint sh = glCreateShader(type);
  glShaderSource(sh, 1, &text, &glen);
  glCompileShader(sh);
  GLint ok = 0;
  glGetShaderiv(sh, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[2048] = "";
    glGetShaderInfoLog(sh, sizeof log, NULL, log);
    g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED, "shader %s: does not compile: %s", name,
                log);
    glDeleteShader(sh);
    return 0;
  }
  return sh;
}

GLuint nw_gl_program_new(const char *vert_name, const char *frag_name, GError **error)
{
  GLuint vs = compile(GL_VERTEX_SHADER, vert_name, error);
  if (vs == 0)
    return 0;
  GLuint fs = compile(GL_FRAGMENT_SHADER, frag_name, error);
  if (fs == 0) {
    glDeleteShader(vs);
    return 0;
  }
  GLuint prog = glCreateProgram();
  glAttachShader(prog, vs);
  glAttachShader(prog, fs);
  glLinkProgram(prog);
  glDeleteShader(vs);
  glDeleteShader(fs);
  GLint ok = 0;
  glGetProgramiv(prog, GL_LINK_STATUS, &ok);
  if (!ok) {
    char log[2048] = "";
    glGetProgramInfoLog(prog, sizeof log, NULL, log);
    g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED, "shaders %s + %s: do not link: %s",
                vert_name, frag_name, log);
    glDeleteProgram(prog);
    return 0;
  }
  return prog;
}

void nw_gl_set_int(GLuint prog, const char *name, int v)
{
  glUniform1i(glGetUniformLocation(prog, name), v);
}

void nw_gl_set_float(GLuint prog, const char *name, float v)
{
  glUniform1f(glGetUniformLocation(prog, name), v);
}

void nw_gl_set_vec2(GLuint prog, const char *name, float x, float y)
{
  glUniform2f(glGetUniformLocation(prog, name), x, y);
}

void nw_gl_set_vec3(GLuint prog, const char *name, const float v[3])
{
  glUniform3fv(glGetUniformLocation(prog, name), 1, v);
}

void nw_gl_set_vec4(GLuint prog, const char *name, const float v[4])
{
  glUniform4fv(glGetUniformLocation(prog, name), 1, v);
}

void nw_gl_set_mat4(GLuint prog, const char *name, const double m[16])
{
  float f[16];
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < 4; c++)
      f[c * 4 + r] = (float)m[r * 4 + c]; /* column-major for GL */
  glUniformMatrix4fv(glGetUniformLocation(prog, name), 1, GL_FALSE, f);
}

void nw_gl_bind_texture(GLuint prog, const char *name, int unit, GLenum target, GLuint tex)
{
  glActiveTexture(GL_TEXTURE0 + (GLenum)unit);
  glBindTexture(target, tex);
  glUniform1i(glGetUniformLocation(prog, name), unit);
}

guint8 *nw_gl_read_rgba(int x, int y, int w, int h)
{
  guint8 *px = g_malloc((size_t)w * (size_t)h * 4);
  guint8 *row = g_malloc((size_t)w * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(x, y, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px);
  /* GL rows go bottom-up; images top-down. */
  for (int r = 0; r < h / 2; r++) {
    guint8 *a = px + (size_t)r * w * 4, *b = px + (size_t)(h - 1 - r) * w * 4;
    memcpy(row, a, (size_t)w * 4);
    memcpy(a, b, (size_t)w * 4);
    memcpy(b, row, (size_t)w * 4);
  }
  g_free(row);
  return px;
}

gboolean nw_gl_target_init(NwGlTarget *t, int w, int h, GError **error)
{
  memset(t, 0, sizeof *t);
  t->width = w;
  t->height = h;
  glGenFramebuffers(1, &t->fbo);
  glGenRenderbuffers(1, &t->color_rb);
  glGenRenderbuffers(1, &t->depth_rb);
  glBindRenderbuffer(GL_RENDERBUFFER, t->color_rb);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, w, h);
  glBindRenderbuffer(GL_RENDERBUFFER, t->depth_rb);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH24_STENCIL8, w, h);
  glBindFramebuffer(GL_FRAMEBUFFER, t->fbo);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, t->color_rb);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_STENCIL_ATTACHMENT, GL_RENDERBUFFER,
                            t->depth_rb);
  GLenum st = glCheckFramebufferStatus(GL_FRAMEBUFFER);
  if (st != GL_FRAMEBUFFER_COMPLETE) {
    g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED,
                "offscreen framebuffer %dx%d: incomplete (status 0x%x)", w, h, st);
    nw_gl_target_clear(t);
    return FALSE;
  }
  glViewport(0, 0, w, h);
  return TRUE;
}

void nw_gl_target_clear(NwGlTarget *t)
{
  if (t->fbo != 0)
    glDeleteFramebuffers(1, &t->fbo);
  if (t->color_rb != 0)
    glDeleteRenderbuffers(1, &t->color_rb);
  if (t->depth_rb != 0)
    glDeleteRenderbuffers(1, &t->depth_rb);
  memset(t, 0, sizeof *t);
}
