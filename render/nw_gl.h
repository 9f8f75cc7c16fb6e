/* nw_gl.h — small OpenGL 3.3 core helpers shared by the renderers: GLEW start-up (that also
 * works in EGL contexts), shader programs built from the bundled GLSL sources, uniforms set
 * by name, and pixel read-back for screenshots and tests.
 *
 * render/ knows GL, not GTK: every function draws into or queries whatever GL 3.3 core
 * context is current on the calling thread (the GTK main thread in the application, the test
 * thread with an EGL pbuffer in tests). */
#ifndef NW_GL_H
#define NW_GL_H

#include <GL/glew.h>
#include <glib.h>

G_BEGIN_DECLS

/* Load the GL entry points for the current context. Debian's GLEW reports
 * GLEW_ERROR_NO_GLX_DISPLAY in EGL contexts although every entry point loaded: that counts
 * as success. Fails (NW_ERROR_UNSUPPORTED) when the context is older than 3.3. */
gboolean nw_gl_init(GError **error);

/* Build a program from two GLSL files bundled under /org/neurowarp/shaders/ (names such as
 * "slice.vert"). The error carries the GLSL compiler or linker log. */
GLuint nw_gl_program_new(const char *vert_name, const char *frag_name, GError **error);

/* Uniform setters by name on the program currently in use (unknown names are ignored, as
 * GL does with location -1). Matrices are row-major 4x4 doubles (the project's convention)
 * converted to GL's column-major floats. */
void nw_gl_set_int(GLuint prog, const char *name, int v);
void nw_gl_set_float(GLuint prog, const char *name, float v);
void nw_gl_set_vec2(GLuint prog, const char *name, float x, float y);
void nw_gl_set_vec3(GLuint prog, const char *name, const float v[3]);
void nw_gl_set_vec4(GLuint prog, const char *name, const float v[4]);
void nw_gl_set_mat4(GLuint prog, const char *name, const double m_row_major[16]);

/* Bind tex (target) to texture unit `unit` and point the sampler uniform at it. */
void nw_gl_bind_texture(GLuint prog, const char *name, int unit, GLenum target, GLuint tex);

/* Read back the RGBA8 pixels of the current read framebuffer, rows top-down (image order,
 * not GL's bottom-up). w*h*4 bytes, free with g_free. */
guint8 *nw_gl_read_rgba(int x, int y, int w, int h);

/* An offscreen RGBA8 + depth framebuffer of w x h pixels (screenshots of views, tests). */
typedef struct {
  GLuint fbo, color_rb, depth_rb;
  int width, height;
} NwGlTarget;
gboolean nw_gl_target_init(NwGlTarget *t, int w, int h, GError **error);
void nw_gl_target_clear(NwGlTarget *t);

G_END_DECLS

#endif
