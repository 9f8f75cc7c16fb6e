/* nw_egl.c — an offscreen GL 3.3 core context through EGL (see nw_egl.h). Calling thread. */
#include "nw_egl.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>

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

static EGLDisplay open_display(gboolean prefer_gpu)
{
  PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display =
      (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
  EGLDisplay d = EGL_NO_DISPLAY;
  EGLint major, minor;
  if (get_platform_display != NULL && prefer_gpu &&
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

gboolean nw_egl_make_current(gboolean prefer_gpu, char *why, size_t why_len)
{
  if (prefer_gpu)
    g_unsetenv("LIBGL_ALWAYS_SOFTWARE");
  else /* the software rasteriser: the same pixels on every machine */
    g_setenv("LIBGL_ALWAYS_SOFTWARE", "1", FALSE);
  EGLDisplay d = open_display(prefer_gpu);
  if (d == EGL_NO_DISPLAY || !eglBindAPI(EGL_OPENGL_API)) {
    g_snprintf(why, why_len, "no EGL display with desktop OpenGL");
    return FALSE;
  }
  const EGLint cfg_attr[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_SURFACE_TYPE, 0, EGL_NONE};
  EGLConfig cfg;
  EGLint n = 0;
  if (!eglChooseConfig(d, cfg_attr, &cfg, 1, &n) || n < 1) {
    g_snprintf(why, why_len, "no EGL config for OpenGL");
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
    g_snprintf(why, why_len, "no OpenGL 3.3 core context (EGL error 0x%x)", eglGetError());
    return FALSE;
  }
  return TRUE;
}
