/* test_render_egl.c — an offscreen OpenGL 3.3 core context for the render/ tests
 * (render/nw_egl.h), drawing into an NwGlTarget framebuffer; a test without one skips. Test
 * thread only. */
#include <stdio.h>

#include "nw_egl.h"
#include "nw_gl.h"

static gboolean context(gboolean prefer_gpu, int w, int h, NwGlTarget *target)
{
  char why[256];
  if (!nw_egl_make_current(prefer_gpu, why, sizeof why)) {
    printf("SKIP: %s\n", why);
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

/* Makes a context current and an offscreen target of w x h bound; FALSE (with a message on
 * stdout) when this machine has no usable GL 3.3 core. Mesa's software rasteriser where it
 * is to be had: the same pixels everywhere. */
gboolean nw_test_gl_context(int w, int h, NwGlTarget *target)
{
  return context(FALSE, w, h, target);
}

/* As nw_test_gl_context, but a GPU's own driver first (EGL device platform, hardware GL):
 * what CUDA-GL interop needs. Falls back to the same displays as nw_test_gl_context. */
gboolean nw_test_gl_context_on_gpu(int w, int h, NwGlTarget *target)
{
  return context(TRUE, w, h, target);
}
