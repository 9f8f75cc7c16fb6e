/* nw_egl.h — an OpenGL 3.3 core context without a window, for programs that draw offscreen
 * (the render/ tests, the benchmarks): EGL on a GPU's own driver (the EGL device platform,
 * hardware GL, what CUDA–GL interop needs) when asked to prefer one, else Mesa's
 * surfaceless platform (no display needed), else any EGL device, else the default display
 * (Xvfb). The context is made current on the calling thread with no surface: draw into an
 * NwGlTarget framebuffer (nw_gl.h). A library of its own (nw_egl), so the application does
 * not link EGL. */
#ifndef NW_EGL_H
#define NW_EGL_H

#include <glib.h>

G_BEGIN_DECLS

/* TRUE with the context current; FALSE with why (a sentence) when this machine has no
 * usable EGL display, config or GL 3.3 core context. prefer_gpu: try the GPUs' own drivers
 * first (and do not force Mesa's software rasteriser). */
gboolean nw_egl_make_current(gboolean prefer_gpu, char *why, size_t why_len);

G_END_DECLS

#endif
