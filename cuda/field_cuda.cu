/* field_cuda.cu — see field_cuda.cuh. CUDA back end. */
#include "field_cuda.cuh"

#include <math.h>

#include "cuda_check.h"
#include "field.h"
#include "staging_cuda.cuh"

#define THREADS 256

__global__ void compose_kernel(float4 *__restrict__ out, const float4 *__restrict__ a, float sa,
                               const float4 *__restrict__ b, float sb, NwGrid g)
{
  int i, j, k;
  long long e;
  if (!voxel_of_thread(g, i, j, k, e))
    return;
  const float4 be = sb * b[e];
  const float4 ae = sample_trilinear(a, g, (float)i + be.x, (float)j + be.y, (float)k + be.z);
  out[e] = be + sa * ae;
}

cudaError_t nw_compose_cuda(float4 *out, const float4 *a, float sa, const float4 *b, float sb,
                            const NwGrid &g, cudaStream_t stream)
{
  compose_kernel<<<nw_voxel_grid(g), NW_VOXEL_THREADS, 0, stream>>>(out, a, sa, b, sb, g);
  return nw_cuda_launched(stream);
}

__global__ void axpy_kernel(float4 *out, const float4 *a, float scale, const float4 *b, long long n)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e < n)
    out[e] = a[e] + scale * b[e];
}

cudaError_t nw_axpy_cuda(float4 *out, const float4 *a, float scale, const float4 *b,
                         const NwGrid &g, cudaStream_t stream)
{
  axpy_kernel<<<nw_blocks_for(g.n(), THREADS), THREADS, 0, stream>>>(out, a, scale, b, g.n());
  return nw_cuda_launched(stream);
}

/* Grid-stride maximum of |u| per block, then nw_block_max_to. */
__global__ void max_norm_kernel(unsigned *__restrict__ d_max_bits, const float4 *__restrict__ u,
                                long long n)
{
  float m = 0.0f;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < n;
       e += (long long)gridDim.x * blockDim.x)
    m = fmaxf(m, norm3(u[e]));
  nw_block_max_to<THREADS, 1>(d_max_bits, m);
}

cudaError_t nw_max_norm_cuda(float *d_max, const float4 *u, const NwGrid &g, cudaStream_t stream)
{
  cudaError_t e = cudaMemsetAsync(d_max, 0, sizeof(float), stream);
  if (e != cudaSuccess)
    return e;
  long long blocks = (g.n() + THREADS - 1) / THREADS;
  if (blocks > 4096) /* enough to fill any GPU; the rest is the grid-stride loop */
    blocks = 4096;
  max_norm_kernel<<<(unsigned)(blocks < 1 ? 1 : blocks), THREADS, 0, stream>>>(
      reinterpret_cast<unsigned *>(d_max), u, g.n());
  return nw_cuda_launched(stream);
}

cudaError_t nw_exp_cuda(float4 *out, float4 *scratch, const float4 *v, float sign, int n_squarings,
                        const NwGrid &g, cudaStream_t stream)
{
  const float scale = sign * (float)ldexp(1.0, -n_squarings);
  if (n_squarings == 0)
    return nw_axpy_cuda(out, v, scale - 1.0f, v, g, stream); /* out = scale·v */
  /* The first squaring reads v scaled on the fly; then ping-pong so that the last of the
   * n_squarings writes lands in out. */
  float4 *dst = (n_squarings % 2 == 1) ? out : scratch;
  float4 *other = dst == out ? scratch : out;
  cudaError_t e = nw_compose_cuda(dst, v, scale, v, scale, g, stream);
  for (int q = 1; q < n_squarings && e == cudaSuccess; q++) {
    e = nw_compose_cuda(other, dst, 1.0f, dst, 1.0f, g, stream);
    float4 *t = dst;
    dst = other;
    other = t;
  }
  return e;
}

__global__ void warp_kernel(float *__restrict__ out, const float *__restrict__ in,
                            const float4 *__restrict__ s, bool nearest, NwGrid g)
{
  int i, j, k;
  long long e;
  if (!voxel_of_thread(g, i, j, k, e))
    return;
  const float4 d = s[e];
  const float x = (float)i + d.x, y = (float)j + d.y, z = (float)k + d.z;
  out[e] = nearest ? sample_nearest(in, g, x, y, z) : sample_trilinear(in, g, x, y, z);
}

cudaError_t nw_warp_cuda(float *out, const float *in, const float4 *s, bool nearest,
                         const NwGrid &g, cudaStream_t stream)
{
  warp_kernel<<<nw_voxel_grid(g), NW_VOXEL_THREADS, 0, stream>>>(out, in, s, nearest, g);
  return nw_cuda_launched(stream);
}

__global__ void jacobian_kernel(float *__restrict__ out, const float4 *__restrict__ u, NwGrid g)
{
  int i, j, k;
  long long e;
  if (!voxel_of_thread(g, i, j, k, e))
    return;
  out[e] = jacobian_det(u, g, i, j, k, e);
}

cudaError_t nw_jacobian_cuda(float *out, const float4 *u, const NwGrid &g, cudaStream_t stream)
{
  jacobian_kernel<<<nw_voxel_grid(g), NW_VOXEL_THREADS, 0, stream>>>(out, u, g);
  return nw_cuda_launched(stream);
}

__global__ void expand_kernel(float4 *__restrict__ out, const float *__restrict__ xyz, long long n)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e < n)
    out[e] = make_float4(xyz[3 * e], xyz[3 * e + 1], xyz[3 * e + 2], 0.0f);
}

__global__ void pack_kernel(float *__restrict__ xyz, const float4 *__restrict__ in, long long n)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n)
    return;
  const float4 d = in[e];
  xyz[3 * e] = d.x;
  xyz[3 * e + 1] = d.y;
  xyz[3 * e + 2] = d.z;
}

cudaError_t nw_field_upload(float4 *d_field, void *d_staging, const float *h_xyz, const NwGrid &g,
                            cudaStream_t stream)
{
  cudaError_t e = cudaMemcpyAsync(d_staging, h_xyz, (size_t)g.n() * 3 * sizeof(float),
                                  cudaMemcpyHostToDevice, stream);
  if (e != cudaSuccess)
    return e;
  return nw_field_expand_cuda(d_field, (const float *)d_staging, (size_t)g.n(), stream);
}

cudaError_t nw_field_expand_cuda(float4 *out, const float *xyz, size_t n, cudaStream_t stream)
{
  if (n == 0)
    return cudaSuccess;
  expand_kernel<<<nw_blocks_for((long long)n, THREADS), THREADS, 0, stream>>>(out, xyz,
                                                                            (long long)n);
  return nw_cuda_launched(stream);
}

/* The results leave the GPU through two pinned chunks (staging_cuda.cuh): a plain cudaMemcpy
 * into a new 166 MB host field took 107-114 ms on the H100 host (fluid's 240^3 result,
 * 2026-11-26). */
cudaError_t nw_field_download(float *h_xyz, void *d_staging, const float4 *d_field, const NwGrid &g,
                              float *stage, cudaStream_t stream)
{
  pack_kernel<<<nw_blocks_for(g.n(), THREADS), THREADS, 0, stream>>>((float *)d_staging, d_field,
                                                                     g.n());
  cudaError_t e = nw_cuda_launched(stream);
  if (e != cudaSuccess)
    return e;
  return nw_download_floats(h_xyz, (const float *)d_staging, (size_t)g.n() * 3, stage, stream);
}

NwVolume *nw_image_download_new(const float *d, const NwVolume *like, float *stage,
                                cudaStream_t stream, GError **error)
{
  g_autoptr(NwVolume) h = nw_volume_new_like(like, 1, error);
  if (h == NULL ||
      !NW_CUDA_CHECK(nw_download_floats(h->data, d, nw_volume_n_voxels(h), stage, stream), error))
    return NULL;
  return (NwVolume *)g_steal_pointer(&h);
}

NwVolume *nw_field_download_new(const float4 *d, void *d_staging, const NwVolume *like,
                                float *stage, cudaStream_t stream, GError **error)
{
  g_autoptr(NwVolume) h = nw_volume_new_like(like, 3, error);
  const NwGrid g{like->nx, like->ny, like->nz};
  if (h == NULL || !NW_CUDA_CHECK(nw_field_download(h->data, d_staging, d, g, stage, stream), error))
    return NULL;
  return (NwVolume *)g_steal_pointer(&h);
}

gboolean nw_field_job_fits(const char *method, const NwVolume *fixed, size_t bytes, GError **error)
{
  g_autofree char *what =
      g_strdup_printf("%s: a %d x %d x %d volume", method, fixed->nx, fixed->ny, fixed->nz);
  return nw_cuda_check_fits(bytes + (64u << 20) /* slack */, what,
                            "use --device cpu or a smaller image", error);
}
