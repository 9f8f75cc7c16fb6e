/* test_render_egl.c — an offscreen OpenGL 3.3 core context for the render/ tests: EGL on
 * Mesa's surfaceless platform (no display needed), else the default EGL display (Xvfb),
 * drawing into an NwGlTarget framebuffer. Test thread only. */
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <stdio.h>

#include "nw_gl.h"

gboolean nw_test_gl_context(int w, int h, NwGlTarget *target);
gboolean nw_test_gl_context_on_gpu(int w, int h, NwGlTarget *target);

/* The first EGL device (a GPU, with the vendor's driver) that initialises: how a machine
 * without X (the GPU host) gets a hardware context. */
static EGLDisplay open_device_display(PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display)
{
  PFNEGLQUERYDEVICESEXTPROC query_devices =
      (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
  EGLDeviceEXT devices[8];
  EGLint n = 0, major, minor;
  if (query_devices == NULL || !query_devices(8, devices, &n))
    return EGL_NO_DISPLAY;
  for (int i = 0; i < n; i++) {
    EGLDisplay d = get_platform_display(EGL_PLATFORM_DEVICE_EXT, devices[i], NULL);
    if (d != EGL_NO_DISPLAY && eglInitialize(d, &major, &minor))
      return d;
  }
  return EGL_NO_DISPLAY;
}

static gboolean prefer_device;

static EGLDisplay open_display(void)
{
  PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display =
      (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
  EGLDisplay d = EGL_NO_DISPLAY;
  EGLint major, minor;
  if (get_platform_display != NULL && prefer_device &&
      (d = open_device_display(get_platform_display)) != EGL_NO_DISPLAY)
    return d;
  if (get_platform_display != NULL) {
    d = get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    if (d != EGL_NO_DISPLAY && eglInitialize(d, &major, &minor))
      return d;
    if ((d = open_device_display(get_platform_display)) != EGL_NO_DISPLAY)
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
  if (!prefer_device)
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

/* As nw_test_gl_context, but a GPU's own driver first (EGL device platform, hardware GL):
 * what CUDA-GL interop needs. Falls back to the same displays as nw_test_gl_context. */
gboolean nw_test_gl_context_on_gpu(int w, int h, NwGlTarget *target)
{
  prefer_device = TRUE;
  g_unsetenv("LIBGL_ALWAYS_SOFTWARE");
  gboolean ok = nw_test_gl_context(w, h, target);
  prefer_device = FALSE;
  return ok;
}
