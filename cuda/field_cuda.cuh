/* field_cuda.cuh — displacement/velocity field operations on the GPU, the twins of
 * core/field.h and core/resample.h (nw_field_compose, nw_field_exp, nw_warp,
 * nw_field_jacobian_det, nw_field_max_norm), and what the field methods' jobs share around
 * them (host copies of results, the memory check). CUDA back end; every kernel's function
 * enqueues on the caller's stream and returns the launch status (nw_cuda_launched: no
 * synchronisation except in Debug builds). Each kernel's parity test:
 * tests/test_cuda_field_kernels.cu.
 *
 * Fields are float4 (x, y, z, 0) in voxel units on an NwGrid; images are float. */
#ifndef NW_FIELD_CUDA_CUH
#define NW_FIELD_CUDA_CUH

#include <cuda_runtime.h>
#include <glib.h>

#include "field_device.cuh"
#include "volume.h"

/* out(x) = sb·b(x) + sa·a(x + sb·b(x)): (id + out) = (id + sa·a) ∘ (id + sb·b).
 * out must differ from a and b. */
cudaError_t nw_compose_cuda(float4 *out, const float4 *a, float sa, const float4 *b, float sb,
                            const NwGrid &g, cudaStream_t stream);

/* out = a + scale·b (out may be a or b). */
cudaError_t nw_axpy_cuda(float4 *out, const float4 *a, float scale, const float4 *b,
                         const NwGrid &g, cudaStream_t stream);

/* max |u| over voxels, written (as float) to *d_max on the device. */
cudaError_t nw_max_norm_cuda(float *d_max, const float4 *u, const NwGrid &g, cudaStream_t stream);

/* out = exp(sign·v) by scaling and squaring with n_squarings squarings (from
 * nw_field_exp_squarings_for_norm of max|v|, core/field.h: the CPU's rule). scratch: a second field
 * buffer. out, scratch, v distinct. */
cudaError_t nw_exp_cuda(float4 *out, float4 *scratch, const float4 *v, float sign, int n_squarings,
                        const NwGrid &g, cudaStream_t stream);

/* out(x) = in(x + s(x)), trilinear (nearest = false) or nearest neighbour. */
cudaError_t nw_warp_cuda(float *out, const float *in, const float4 *s, bool nearest,
                         const NwGrid &g, cudaStream_t stream);

/* out(x) = det(I + ∇u(x)). */
cudaError_t nw_jacobian_cuda(float *out, const float4 *u, const NwGrid &g, cudaStream_t stream);

/* float3-packed (host layout, nc = 3) <-> float4 device fields, through a device staging
 * buffer of at least 12·n bytes (it may alias nothing else in flight). */
cudaError_t nw_field_upload(float4 *d_field, void *d_staging, const float *h_xyz, const NwGrid &g,
                            cudaStream_t stream);
/* n float3-packed vectors (xyz, on the device) as float4 with w = 0 into out (not xyz):
 * nw_field_upload's second half, and a field's RGBA texels for the live view
 * (texel_dma.cu). */
cudaError_t nw_field_expand_cuda(float4 *out, const float *xyz, size_t n, cudaStream_t stream);
/* The downloads go through stage, a job's pinned pair (staging_cuda.cuh; NULL: one made for
 * the call). */
cudaError_t nw_field_download(float *h_xyz, void *d_staging, const float4 *d_field, const NwGrid &g,
                              float *stage, cudaStream_t stream);

/* New host copies on the grid of `like` (its size and affine): of the device image d (nc = 1)
 * and of the device field d (nc = 3, through d_staging as nw_field_download), through stage as
 * above. Both synchronise the stream; NULL with *error set (NW_CUDA_CHECK's message) on
 * failure. */
NwVolume *nw_image_download_new(const float *d, const NwVolume *like, float *stage,
                                cudaStream_t stream, GError **error);
NwVolume *nw_field_download_new(const float4 *d, void *d_staging, const NwVolume *like,
                                float *stage, cudaStream_t stream, GError **error);

/* A field job's check before it allocates anything (demons, fluid): TRUE when bytes, and
 * 64 MiB of slack, are free on the current device; else one clear message (NW_ERROR_NOMEM)
 * naming method, the fixed image's size, the need and what is free. */
gboolean nw_field_job_fits(const char *method, const NwVolume *fixed, size_t bytes, GError **error);

#endif
