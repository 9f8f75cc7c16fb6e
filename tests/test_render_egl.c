/* test_render_egl.c — an offscreen OpenGL 3.3 core context for the render/ tests: EGL on
 * Mesa's surfaceless platform (no display needed), else the default EGL display (Xvfb),
 * drawing into an NwGlTarget framebuffer. Test thread only. */
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <stdio.h>

#include "nw_gl.h"

gboolean nw_test_gl_context(int w, int h, NwGlTarget *target);

static EGLDisplay open_display(void)
{
  PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display =
      (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
  EGLDisplay d = EGL_NO_DISPLAY;
  EGLint major, minor;
  if (get_platform_display != NULL) {
    d = get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    if (d != EGL_NO_DISPLAY && eglInitialize(d, &major, &minor))
      return d;
  }
  d = eglGetDisplay(EGL_DEFAULT_DISPLAY);
  if (d != EGL_NO_DISPLAY && eglInitialize(d, &major, &minor))
    return d;
  return EGL_NO_DISPLAY;
}

/* Makes a context current and an offscreen target of w x h bound; FALSE (with a message on
 * stdout) when this machine has no usable GL 3.3 core. */
gboolean nw_test_gl_context(int w, int h, NwGlTarget *target)
{
  g_setenv("LIBGL_ALWAYS_SOFTWARE", "1", FALSE);
  EGLDisplay d = open_display();
  if (d == EGL_NO_DISPLAY || !eglBindAPI(EGL_OPENGL_API)) {
    printf("SKIP: no EGL display with desktop OpenGL\n");
    return FALSE;
  }
  const EGLint cfg_attr[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_SURFACE_TYPE, 0, EGL_NONE};
  EGLConfig cfg;
  EGLint n = 0;
  if (!eglChooseConfig(d, cfg_attr, &cfg, 1, &n) || n < 1) {
    printf("SKIP: no EGL config for OpenGL\n");
    return FALSE;
  }
  const EGLint ctx_attr[] = {EGL_CONTEXT_MAJOR_VERSION,
                             3,
                             EGL_CONTEXT_MINOR_VERSION,
                             3,
                             EGL_CONTEXT_OPENGL_PROFILE_MASK,
                             EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                             EGL_NONE};
  EGLContext ctx = eglCreateContext(d, cfg, EGL_NO_CONTEXT, ctx_attr);
  if (ctx == EGL_NO_CONTEXT || !eglMakeCurrent(d, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
    printf("SKIP: no OpenGL 3.3 core context (EGL error 0x%x)\n", eglGetError());
    return FALSE;
  }
  g_autoptr(GError) error = NULL;
  if (!nw_gl_init(&error)) {
    printf("SKIP: %s\n", error->message);
    return FALSE;
  }
  g_assert_true(nw_gl_target_init(target, w, h, &error));
  g_assert_no_error(error);
  return TRUE;
}
