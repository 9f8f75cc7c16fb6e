/* copy_beside.h — a large copy that runs beside other work and is waited for: the live
 * view's frames, copied into GL's upload slots by the display thread (render/gl_volume.c) and
 * into the run's timeline (scene/nw_timeline.c) while the job runs. Any thread; several
 * copies may run at once.
 *
 * The caller copies pieces itself from the start, and a few helper threads take pieces too
 * as they come; the copy is over when every piece is done, not when every helper has come
 * (beside.h). (OpenMP's parallel loop, used before, ends at a barrier that every thread of
 * its team must reach: on the H100 host a helper thread woken late held every such copy of a
 * frame to 4-5 ms, against 0.75 ms usually, and those frames were drawn two iterations late,
 * issue 8.) */
#ifndef NW_COPY_BESIDE_H
#define NW_COPY_BESIDE_H

#include <glib.h>
#include <stddef.h>

G_BEGIN_DECLS

/* n voxels of src_nc floats into voxels of dst_nc floats: the same count, or 3 into 4 with
 * the 4th 0 (a field into an RGBA texture's layout). From 1 MiB on with helpers of the
 * display's own (beside.h's NW_BESIDE_DISPLAY), in 256 KiB pieces (written). */
void nw_copy_voxels_beside(float *dst, int dst_nc, const float *src, int src_nc, size_t n);
/* n floats from src to dst, the same way. */
void nw_copy_floats_beside(float *dst, const float *src, size_t n);
/* nw_copy_voxels_beside with at most `helpers` of the jobs' helpers (NW_BESIDE_WORK;
 * nw_copy_floats: a staging chunk's, beside.h's nw_beside_copy_helpers). */
void nw_copy_voxels_helped(float *dst, int dst_nc, const float *src, int src_nc, size_t n,
                           guint helpers);
/* Threads that take part in such a copy, the caller's included: a few saturate the memory,
 * more only take cores from the others (the job's worker, the display): half the machine's
 * cores, 1 to 4; NW_COPY_THREADS=N (1 to 16) sets it, read until the first large copy made
 * the helpers (tests). */
int nw_copy_threads_beside(void);

G_END_DECLS

#endif
