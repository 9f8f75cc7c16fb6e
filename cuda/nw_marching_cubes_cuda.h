/* nw_marching_cubes_cuda.h — marching cubes on the GPU, the twin of core/marching_cubes.h:
 * same case table (copied from nw_mc_triangle_table to constant memory), same cube and
 * triangle order, same vertex positions and normals; output as a triangle soup (3 vertices
 * per triangle, 6 floats per vertex: position RAS mm, unit outward normal), which is what a
 * GL vertex buffer filled by interop wants. Counting per cube, an exclusive scan (CUB) for
 * the offsets, then emission. Worker or GL thread; everything on the given stream. */
#ifndef NW_MARCHING_CUBES_CUDA_H
#define NW_MARCHING_CUBES_CUDA_H

#include <glib.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct NwMcCuda NwMcCuda; /* scratch buffers, reused between calls of one size */

NwMcCuda *nw_mc_cuda_new(void);
void nw_mc_cuda_free(NwMcCuda *mc);

/* Iso-surface of d_image (nx*ny*nz floats on the device, x fastest) at iso, with the
 * voxel -> RAS affine vox_to_ras (row-major 4x4). Writes at most max_triangles triangles to
 * d_out (device memory, max_triangles * 18 floats); *n_total gets the full count (so a
 * caller can grow its buffer), *n_written min(n_total, max_triangles). Synchronises the
 * stream once (to read the count). */
gboolean nw_mc_cuda_run(NwMcCuda *mc, const float *d_image, int nx, int ny, int nz,
                        const double vox_to_ras[16], float iso, float *d_out,
                        size_t max_triangles, size_t *n_total, size_t *n_written, void *stream,
                        GError **error);

#ifdef __cplusplus
}
#endif

#endif
