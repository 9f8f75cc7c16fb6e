/* bench_demons.cu — log-demons benchmark (not a test): time per iteration of the CUDA method
 * at several sizes, the effective bandwidth of every kernel of an iteration against the
 * device-to-device copy bandwidth measured in the same run, trilinear gathers through the
 * read-only cache (__ldg, the default) against a texture object, the CPU reference's time per
 * iteration, and the whole 3-level registration of the demo pair. JSON on stdout (or --json
 * FILE); a short table on stderr.
 *
 * Every kernel variant timed here is first validated against its CPU twin on the same inputs
 * (llm.c's validate_result, tests/cuda_validate.h), at every size up to --validate-max
 * (default 192; the CPU twins take seconds beyond): the benchmark exits 1 when one differs by
 * more than its stated tolerance (validate_kernels below), after writing its JSON.
 *
 *   bench_demons [--sizes 128,192,256,320] [--iters 20] [--cpu-sizes 128] [--cpu-iters 3]
 *                [--demo-mm 1] [--sweep "k=v,k=v;k=v"] [--sweep-mm 2] [--json FILE]
 * CPU figures use however many OpenMP threads OMP_NUM_THREADS allows: run once with
 * OMP_NUM_THREADS=1 and once with all cores (bench/run_demons_bench.sh does both).
 *
 * Effective bandwidth = the fewest bytes a kernel must move (each input read once, each output
 * written once; neighbour and gather re-reads not counted) / its time. Copy bandwidth =
 * 2 x bytes of a large cudaMemcpy D2D / its time. */
#include <cuda_runtime.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_validate.h"
#include "cuda_validate_demons.cuh"
#include "demo.h"
#include "demons_cpu.h"
#include "demons_kernels.cuh"
#include "demons_method.h"
#include "field.h"
#include "field_cuda.cuh"
#include "gauss_cuda.cuh"
#include "json_out.h"
#include "method.h"
#include "method_table.h"
#include "resample.h"
#include "smooth.h"

static double now_ms(void)
{
  return g_get_monotonic_time() / 1000.0;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ---- synthetic pair: an analytic object and its analytic warp (no host resampling) ----- */

static float object_at(double x, double y, double z, int n)
{
  const double c = (n - 1) / 2.0;
  x = (x - c) / n;
  y = (y - c) / n;
  z = (z - c) / n;
  const double r2 = x * x + 1.3 * y * y + 0.8 * z * z;
  const double body = 1.0 / (1.0 + exp((r2 - 0.12) * 80.0)); /* smooth edge */
  return (float)(body * (100.0 + 40.0 * sin(9.0 * x) * cos(7.0 * y) + 30.0 * tanh(20.0 * z)));
}

static void make_pair(int n, NwVolume **fixed, NwVolume **moving)
{
  NwVolume *f = nw_volume_new(n, n, n, 1, NULL), *m = nw_volume_new(n, n, n, 1, NULL);
  const double a = 0.04 * n; /* peak displacement 4% of the size */
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        const size_t e = nw_volume_index(f, i, j, k);
        const double t = 2.0 * G_PI / n;
        f->data[e] = object_at(i, j, k, n);
        m->data[e] = object_at(i + a * sin(t * j), j + a * sin(t * k), k + a * sin(t * i), n);
      }
  *fixed = f;
  *moving = m;
}

/* ---- device-to-device copy bandwidth ----------------------------------------------------- */

static double copy_bandwidth_gbs(void)
{
  const size_t bytes = (size_t)1 << 30;
  void *a, *b;
  NW_TEST_CUDA(cudaMalloc(&a, bytes));
  NW_TEST_CUDA(cudaMalloc(&b, bytes));
  NW_TEST_CUDA(cudaMemset(a, 1, bytes));
  cudaEvent_t t0, t1;
  NW_TEST_CUDA(cudaEventCreate(&t0));
  NW_TEST_CUDA(cudaEventCreate(&t1));
  double ms[10];
  for (int r = -2; r < 10; r++) {
    NW_TEST_CUDA(cudaEventRecord(t0));
    NW_TEST_CUDA(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice));
    NW_TEST_CUDA(cudaEventRecord(t1));
    NW_TEST_CUDA(cudaEventSynchronize(t1));
    float m;
    NW_TEST_CUDA(cudaEventElapsedTime(&m, t0, t1));
    if (r >= 0)
      ms[r] = m;
  }
  NW_TEST_CUDA(cudaFree(a));
  NW_TEST_CUDA(cudaFree(b));
  return 2.0 * bytes / (median(ms, 10) * 1e6);
}

/* ---- per-kernel timings ------------------------------------------------------------------ */

/* Texture variant of the warp: the moving image in a 3D cudaArray, hardware trilinear
 * filtering with clamped addressing (voxel centres at +0.5). */
__global__ void warp_tex_kernel(float *__restrict__ out, cudaTextureObject_t tex,
                                const float4 *__restrict__ s, NwGrid g)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= g.n())
    return;
  int i, j, k;
  unravel(g, e, i, j, k);
  const float4 d = s[e];
  out[e] = tex3D<float>(tex, i + d.x + 0.5f, j + d.y + 0.5f, k + d.z + 0.5f);
}

/* Texture variant of the composition: the field copied into a float4 cudaArray first (a
 * field changes every squaring, so the copy is part of the cost). */
__global__ void compose_tex_kernel(float4 *__restrict__ out, cudaTextureObject_t tex,
                                   const float4 *__restrict__ b, NwGrid g)
{
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= g.n())
    return;
  int i, j, k;
  unravel(g, e, i, j, k);
  const float4 be = b[e];
  out[e] = be + tex3D<float4>(tex, i + be.x + 0.5f, j + be.y + 0.5f, k + be.z + 0.5f);
}

static cudaTextureObject_t make_texture(cudaArray_t arr)
{
  cudaResourceDesc res = {};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = arr;
  cudaTextureDesc td = {};
  td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = cudaAddressModeClamp;
  td.filterMode = cudaFilterModeLinear;
  td.readMode = cudaReadModeElementType;
  cudaTextureObject_t t;
  NW_TEST_CUDA(cudaCreateTextureObject(&t, &res, &td, NULL));
  return t;
}

static void copy_to_array(cudaArray_t arr, const void *src, size_t elem, const NwGrid &g,
                          cudaStream_t st)
{
  cudaMemcpy3DParms p = {};
  p.srcPtr = make_cudaPitchedPtr((void *)src, g.nx * elem, g.nx, g.ny);
  p.dstArray = arr;
  p.extent = make_cudaExtent(g.nx, g.ny, g.nz);
  p.kind = cudaMemcpyDeviceToDevice;
  NW_TEST_CUDA(cudaMemcpy3DAsync(&p, st));
}

struct KernelTime {
  const char *name;
  double bytes_per_voxel, ms;
};

#define TIME(label, bpv, ...)                                                                      \
  do {                                                                                             \
    double ms_[15];                                                                                \
    for (int r_ = -3; r_ < 15; r_++) {                                                             \
      NW_TEST_CUDA(cudaEventRecord(t0, st));                                                       \
      __VA_ARGS__;                                                                                 \
      NW_TEST_CUDA(cudaEventRecord(t1, st));                                                       \
      NW_TEST_CUDA(cudaEventSynchronize(t1));                                                      \
      float m_;                                                                                    \
      NW_TEST_CUDA(cudaEventElapsedTime(&m_, t0, t1));                                             \
      if (r_ >= 0)                                                                                 \
        ms_[r_] = m_;                                                                              \
    }                                                                                              \
    kt[nk++] = KernelTime{label, (double)(bpv), median(ms_, 15)};                                  \
  } while (0)

static int time_kernels(int n, KernelTime *kt)
{
  NwVolume *fh, *mh;
  make_pair(n, &fh, &mh);
  const NwGrid g = {n, n, n};
  const size_t nv = (size_t)g.n();
  cudaStream_t st;
  NW_TEST_CUDA(cudaStreamCreate(&st));
  float *F, *M, *W, *img, *d_max;
  float4 *v, *s, *u, *tmp;
  NwDemonsSums *part, *sums;
  NW_TEST_CUDA(cudaMalloc(&F, nv * 4));
  NW_TEST_CUDA(cudaMalloc(&M, nv * 4));
  NW_TEST_CUDA(cudaMalloc(&W, nv * 4));
  NW_TEST_CUDA(cudaMalloc(&img, nv * 4));
  NW_TEST_CUDA(cudaMalloc(&v, nv * 16));
  NW_TEST_CUDA(cudaMalloc(&s, nv * 16));
  NW_TEST_CUDA(cudaMalloc(&u, nv * 16));
  NW_TEST_CUDA(cudaMalloc(&tmp, nv * 16));
  NW_TEST_CUDA(cudaMalloc(&d_max, 4));
  NW_TEST_CUDA(cudaMalloc(&part, NW_DEMONS_FIG_BLOCKS * sizeof(NwDemonsSums)));
  NW_TEST_CUDA(cudaMalloc(&sums, sizeof(NwDemonsSums)));
  NW_TEST_CUDA(cudaMemcpy(F, fh->data, nv * 4, cudaMemcpyHostToDevice));
  NW_TEST_CUDA(cudaMemcpy(M, mh->data, nv * 4, cudaMemcpyHostToDevice));
  /* A realistic state: a smooth velocity of a few voxels, s = exp(v), W = M ∘ s. */
  NwVolume *vh = nw_volume_new(n, n, n, 3, NULL);
  nw_demo_smooth_field(vh, 3.0, 11);
  NW_TEST_CUDA(nw_field_upload(v, tmp, vh->data, g, st));
  const int nsq = nw_field_exp_squarings_for_norm(nw_field_max_norm(vh));
  NW_TEST_CUDA(nw_exp_cuda(s, tmp, v, 1.0f, nsq, g, st));
  NW_TEST_CUDA(nw_warp_cuda(W, M, s, false, g, st));
  NwVolumeStats fs;
  nw_volume_stats(fh, &fs);
  NwDemonsLevelConst lc = {(float)fs.mean, (double)(fs.max - fs.min) * (fs.max - fs.min)};
  NwGaussKernel k1[3], k15[3];
  for (int a = 0; a < 3; a++) {
    nw_gauss_kernel(&k1[a], 1.0);
    nw_gauss_kernel(&k15[a], 1.5);
  }
  cudaEvent_t t0, t1;
  NW_TEST_CUDA(cudaEventCreate(&t0));
  NW_TEST_CUDA(cudaEventCreate(&t1));
  int nk = 0;
  TIME("update", 4 + 4 + 16,
       NW_TEST_CUDA(nw_demons_update_cuda(u, F, W, NULL, NULL, NULL, 0, 1.0f, lc, g, st)));
  TIME("gauss3_sigma1", 3 * 32, NW_TEST_CUDA(nw_gauss3_float4(&u, &tmp, g, k1, NULL, st)));
  TIME("gauss3_sigma1.5", 3 * 32, NW_TEST_CUDA(nw_gauss3_float4(&u, &tmp, g, k15, NULL, st)));
  TIME("gauss3_sigma1.5_max", 3 * 32, NW_TEST_CUDA(nw_gauss3_float4(&u, &tmp, g, k15, d_max, st)));
  TIME("max_norm", 16, NW_TEST_CUDA(nw_max_norm_cuda(d_max, u, g, st)));
  TIME("compose_ldg", 48, NW_TEST_CUDA(nw_compose_cuda(tmp, v, 1.0f, u, 1.0f, g, st)));
  /* A squaring gathers from the field it reads: 16 B read + 16 B written per voxel. */
  TIME("exp", 32.0 * nsq, NW_TEST_CUDA(nw_exp_cuda(s, tmp, v, 1.0f, nsq, g, st)));
  TIME("warp_ldg", 24, NW_TEST_CUDA(nw_warp_cuda(W, M, s, false, g, st)));
  TIME("sums", 24,
       NW_TEST_CUDA(nw_demons_sums_cuda(sums, part, F, W, NULL, s, NULL, NULL, NULL, lc, g, st)));
  TIME("warp_sums_fused", 28,
       NW_TEST_CUDA(nw_demons_sums_cuda(sums, part, F, W, M, s, NULL, NULL, NULL, lc, g, st)));
  /* Texture variants. */
  cudaChannelFormatDesc cf = cudaCreateChannelDesc<float>(), cf4 = cudaCreateChannelDesc<float4>();
  cudaArray_t am, av;
  NW_TEST_CUDA(cudaMalloc3DArray(&am, &cf, make_cudaExtent(n, n, n)));
  NW_TEST_CUDA(cudaMalloc3DArray(&av, &cf4, make_cudaExtent(n, n, n)));
  copy_to_array(am, M, 4, g, st);
  cudaTextureObject_t tm = make_texture(am), tv = make_texture(av);
  const unsigned blocks = (unsigned)((g.n() + 255) / 256);
  TIME("warp_tex", 24, warp_tex_kernel<<<blocks, 256, 0, st>>>(img, tm, s, g));
  TIME("compose_tex_incl_copy", 48 + 32, {
    copy_to_array(av, v, 16, g, st);
    compose_tex_kernel<<<blocks, 256, 0, st>>>(tmp, tv, u, g);
  });
  NW_TEST_CUDA(cudaDestroyTextureObject(tm));
  NW_TEST_CUDA(cudaDestroyTextureObject(tv));
  NW_TEST_CUDA(cudaFreeArray(am));
  NW_TEST_CUDA(cudaFreeArray(av));
  void *bufs[] = {F, M, W, img, v, s, u, tmp, d_max, part, sums};
  for (size_t q = 0; q < G_N_ELEMENTS(bufs); q++)
    NW_TEST_CUDA(cudaFree(bufs[q]));
  NW_TEST_CUDA(cudaStreamDestroy(st));
  nw_volume_free(fh);
  nw_volume_free(mh);
  nw_volume_free(vh);
  return nk;
}

/* ---- validation of every timed variant against its CPU twin ------------------------------ */

/* max |d(p+1) - d(p)| between neighbours along any axis, over all components: how far an
 * error in an interpolation weight can move a sample. */
static double max_step(const NwVolume *d)
{
  const size_t stride[3] = {(size_t)d->nc, (size_t)d->nc * d->nx, (size_t)d->nc * d->nx * d->ny};
  const int dims[3] = {d->nx, d->ny, d->nz};
  double m = 0.0;
  for (int k = 0; k < d->nz; k++)
    for (int j = 0; j < d->ny; j++)
      for (int i = 0; i < d->nx; i++) {
        const int p[3] = {i, j, k};
        const size_t e = nw_volume_index(d, i, j, k) * d->nc;
        for (int a = 0; a < 3; a++)
          for (int c = 0; c < d->nc && p[a] + 1 < dims[a]; c++)
            m = fmax(m, fabs((double)d->data[e + stride[a] + c] - d->data[e + c]));
      }
  return m;
}

static double max_abs(const NwVolume *v)
{
  double m = 0.0;
  for (size_t q = 0; q < nw_volume_n_floats(v); q++)
    m = fmax(m, fabs((double)v->data[q]));
  return m;
}

static NwVolume *download(const void *d, int n, int nc)
{
  NwVolume *h = nw_volume_new(n, n, n, nc, NULL);
  NW_TEST_CUDA(
      cudaMemcpy(h->data, d, nw_volume_n_floats(h) * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

/* A host field (nc = 3) from a device float4 field. */
static NwVolume *download_field4(const float4 *d, int n)
{
  g_autoptr(NwVolume) h4 = download(d, n, 4);
  NwVolume *h = nw_volume_new(n, n, n, 3, NULL);
  for (size_t e = 0; e < nw_volume_n_voxels(h); e++)
    for (int c = 0; c < 3; c++)
      h->data[3 * e + c] = h4->data[4 * e + c];
  return h;
}

/* Each variant time_kernels times, once, on the same kind of state (a smooth velocity v,
 * s = exp(v), W = M ∘ s), against its CPU twin given the GPU's own inputs (so each kernel is
 * judged alone). Tolerances, with pos = n 2^-24 (half a float ulp of a coordinate below n: the
 * GPU forms x + u(x) in float, the CPU in double) and ulp(x) = 2^-23 x:
 *   exp                 5e-4 voxel: pos times the field's gradient, through the squarings
 *   warp (ldg, fused)   4 (3 pos step(M) + 4 ulp(max M)): positions and the lerps' rounding
 *   compose             4 (3 pos step(v) + 4 ulp(max |v| + max |u|))
 *   update              1e-5 voxel (float against double, see test_cuda_demons_kernels)
 *   gauss3              3 (2r + 1) ulp(max |u|): one rounding per tap and pass (FMA)
 *   max_norm            2e-6 relative
 *   sums                nw_validate_demons_sums
 *   texture variants    the exact variant's tolerance + 3 2^-8 step: the texture unit's
 *                       interpolation weights have 8 fractional bits, so each of the three
 *                       lerps may be off by up to 2^-8 of its step (2^-9 was exceeded on the
 *                       H100: 0.116 against 0.095 for the warp at 128^3)
 * step(x): the largest difference between neighbours (max_step). Returns the number of
 * variants that failed. */
static int validate_kernels(int n)
{
  g_autoptr(NwVolume) fh = NULL;
  g_autoptr(NwVolume) mh = NULL;
  make_pair(n, &fh, &mh);
  const NwGrid g = {n, n, n};
  const size_t nv = (size_t)g.n();
  float *F = nw_test_device_floats(fh->data, nv), *M = nw_test_device_floats(mh->data, nv);
  float *W = (float *)nw_test_device_poisoned(nv * 4),
        *img = (float *)nw_test_device_poisoned(nv * 4);
  float4 *v = (float4 *)nw_test_device_poisoned(nv * 16),
         *s = (float4 *)nw_test_device_poisoned(nv * 16);
  float4 *u = (float4 *)nw_test_device_poisoned(nv * 16),
         *tmp = (float4 *)nw_test_device_poisoned(nv * 16);
  float4 *x = (float4 *)nw_test_device_poisoned(nv * 16);
  float *d_max = (float *)nw_test_device_poisoned(sizeof(float));
  NwDemonsSums *part =
      (NwDemonsSums *)nw_test_device_poisoned(NW_DEMONS_FIG_BLOCKS * sizeof(NwDemonsSums));
  NwDemonsSums *sums = (NwDemonsSums *)nw_test_device_poisoned(sizeof(NwDemonsSums));
  g_autoptr(NwVolume) vh = nw_volume_new(n, n, n, 3, NULL);
  nw_demo_smooth_field(vh, 3.0, 11);
  NW_TEST_CUDA(nw_field_upload(v, tmp, vh->data, g, 0));
  NwVolumeStats fs;
  nw_volume_stats(fh, &fs);
  const double range = (double)fs.max - fs.min;
  const NwDemonsLevelConst lc = {(float)fs.mean, range * range, NW_DEMONS_LCC_EPS * range * range};
  const double pos = n * ldexp(1.0, -24), ulp = ldexp(1.0, -23), tex = 3.0 * ldexp(1.0, -8);
  int failed = 0;
  char name[96];
#define VALIDATED(ok) (failed += (ok) ? 0 : 1)

  /* exp: s = exp(v) */
  g_autoptr(NwVolume) s_cpu = nw_volume_new_like(vh, 3, NULL);
  const int nsq = nw_field_exp(s_cpu, vh, 1.0);
  NW_TEST_CUDA(nw_exp_cuda(s, tmp, v, 1.0f, nsq, g, 0));
  NW_TEST_CUDA(cudaDeviceSynchronize());
  g_snprintf(name, sizeof name, "%d^3 exp (%d squarings)", n, nsq);
  VALIDATED(nw_validate_result(name, (const float *)s, 4, s_cpu->data, 3, 3, nv,
                               NwTolerance{5e-4, 0.0}) == 0);
  g_autoptr(NwVolume) s_gpu = download_field4(s, n);

  /* warp_ldg: W = M ∘ s */
  g_autoptr(NwVolume) w_cpu = nw_volume_new_like(fh, 1, NULL);
  nw_warp(w_cpu, mh, s_gpu, NW_INTERP_LINEAR);
  const NwTolerance tol_warp = {4.0 * (3.0 * pos * max_step(mh) + 4.0 * ulp * max_abs(mh)), 0.0};
  NW_TEST_CUDA(nw_warp_cuda(W, M, s, false, g, 0));
  NW_TEST_CUDA(cudaDeviceSynchronize());
  g_snprintf(name, sizeof name, "%d^3 warp_ldg", n);
  VALIDATED(nw_validate_result(name, W, 1, w_cpu->data, 1, 1, nv, tol_warp) == 0);
  g_autoptr(NwVolume) w_gpu = download(W, n, 1);

  /* update (ssd, symmetric force, alpha 1) */
  g_autoptr(NwVolume) u_cpu = nw_volume_new_like(vh, 3, NULL);
  nw_demons_update_cpu(u_cpu, fh, w_gpu, NULL, NULL, NULL, NW_DEMONS_FORCE_SYMMETRIC, 1.0,
                       NW_DEMONS_DEN_MIN * lc.scale2);
  NW_TEST_CUDA(
      nw_demons_update_cuda(u, F, W, NULL, NULL, NULL, NW_DEMONS_FORCE_SYMMETRIC, 1.0f, lc, g, 0));
  NW_TEST_CUDA(cudaDeviceSynchronize());
  g_snprintf(name, sizeof name, "%d^3 update", n);
  VALIDATED(nw_validate_result(name, (const float *)u, 4, u_cpu->data, 3, 3, nv,
                               NwTolerance{1e-5, 0.0}) == 0);
  g_autoptr(NwVolume) u_gpu = download_field4(u, n);

  /* gauss3 with sigma 1 and 1.5, the latter also with the fused maximum */
  const double sigmas[] = {1.0, 1.5, 1.5};
  for (int q = 0; q < 3; q++) {
    NwGaussKernel k[3];
    for (int a = 0; a < 3; a++)
      nw_gauss_kernel(&k[a], sigmas[q]);
    g_autoptr(NwVolume) cpu = nw_volume_copy(u_gpu);
    const double s3[3] = {sigmas[q], sigmas[q], sigmas[q]};
    nw_smooth_gaussian(cpu, s3, NULL);
    float4 *data = x, *scratch = tmp;
    NW_TEST_CUDA(cudaMemcpy(data, u, nv * 16, cudaMemcpyDeviceToDevice));
    NW_TEST_CUDA(nw_poison(scratch, nv * 16));
    NW_TEST_CUDA(nw_gauss3_float4(&data, &scratch, g, k, q == 2 ? d_max : NULL, 0));
    NW_TEST_CUDA(cudaDeviceSynchronize());
    const NwTolerance tol = {3.0 * (2 * k[0].radius + 1) * ulp * max_abs(u_gpu), 0.0};
    g_snprintf(name, sizeof name, "%d^3 gauss3 sigma %g%s", n, sigmas[q], q == 2 ? " + max" : "");
    VALIDATED(nw_validate_result(name, (const float *)data, 4, cpu->data, 3, 3, nv, tol) == 0);
    if (q == 2) {
      float m = NAN;
      NW_TEST_CUDA(cudaMemcpy(&m, d_max, sizeof m, cudaMemcpyDeviceToHost));
      g_snprintf(name, sizeof name, "%d^3 gauss3 fused max", n);
      VALIDATED(
          nw_validate_value(name, m, nw_field_max_norm(cpu), NwTolerance{2.0 * tol.abs, 2e-6}));
    }
  }

  /* max_norm of u */
  NW_TEST_CUDA(nw_max_norm_cuda(d_max, u, g, 0));
  float m = NAN;
  NW_TEST_CUDA(cudaMemcpy(&m, d_max, sizeof m, cudaMemcpyDeviceToHost));
  g_snprintf(name, sizeof name, "%d^3 max_norm", n);
  VALIDATED(nw_validate_value(name, m, nw_field_max_norm(u_gpu), NwTolerance{0.0, 2e-6}));

  /* compose_ldg: tmp = v ∘ u, and its texture variant */
  g_autoptr(NwVolume) c_cpu = nw_volume_new_like(vh, 3, NULL);
  nw_field_compose(c_cpu, vh, u_gpu);
  const NwTolerance tol_compose = {
      4.0 * (3.0 * pos * max_step(vh) + 4.0 * ulp * (max_abs(vh) + max_abs(u_gpu))), 0.0};
  NW_TEST_CUDA(nw_poison(tmp, nv * 16));
  NW_TEST_CUDA(nw_compose_cuda(tmp, v, 1.0f, u, 1.0f, g, 0));
  NW_TEST_CUDA(cudaDeviceSynchronize());
  g_snprintf(name, sizeof name, "%d^3 compose_ldg", n);
  VALIDATED(nw_validate_result(name, (const float *)tmp, 4, c_cpu->data, 3, 3, nv, tol_compose) ==
            0);

  /* sums, W read; then W = M ∘ s fused in (into img) */
  NW_TEST_CUDA(nw_demons_sums_cuda(sums, part, F, W, NULL, s, NULL, NULL, NULL, lc, g, 0));
  NwDemonsSums h;
  NW_TEST_CUDA(cudaMemcpy(&h, sums, sizeof h, cudaMemcpyDeviceToHost));
  g_snprintf(name, sizeof name, "%d^3 sums", n);
  VALIDATED(nw_validate_demons_sums(name, &h, fh, w_gpu, NULL, NULL, NULL, s_gpu, lc, NULL));
  NW_TEST_CUDA(nw_poison(sums, sizeof(NwDemonsSums)));
  NW_TEST_CUDA(nw_demons_sums_cuda(sums, part, F, img, M, s, NULL, NULL, NULL, lc, g, 0));
  NW_TEST_CUDA(cudaMemcpy(&h, sums, sizeof h, cudaMemcpyDeviceToHost));
  g_snprintf(name, sizeof name, "%d^3 warp_sums_fused: W", n);
  VALIDATED(nw_validate_result(name, img, 1, w_cpu->data, 1, 1, nv, tol_warp) == 0);
  g_autoptr(NwVolume) w_fused = download(img, n, 1);
  g_snprintf(name, sizeof name, "%d^3 warp_sums_fused", n);
  VALIDATED(nw_validate_demons_sums(name, &h, fh, w_fused, NULL, NULL, NULL, s_gpu, lc, NULL));

  /* Texture variants: the moving image and the field in 3D arrays, hardware filtering. */
  cudaChannelFormatDesc cf = cudaCreateChannelDesc<float>(), cf4 = cudaCreateChannelDesc<float4>();
  cudaArray_t am, av;
  NW_TEST_CUDA(cudaMalloc3DArray(&am, &cf, make_cudaExtent(n, n, n)));
  NW_TEST_CUDA(cudaMalloc3DArray(&av, &cf4, make_cudaExtent(n, n, n)));
  copy_to_array(am, M, 4, g, 0);
  copy_to_array(av, v, 16, g, 0);
  cudaTextureObject_t tm = make_texture(am), tv = make_texture(av);
  const unsigned blocks = (unsigned)((g.n() + 255) / 256);
  NW_TEST_CUDA(nw_poison(img, nv * 4));
  warp_tex_kernel<<<blocks, 256>>>(img, tm, s, g);
  NW_TEST_CUDA(cudaGetLastError());
  NW_TEST_CUDA(cudaDeviceSynchronize());
  g_snprintf(name, sizeof name, "%d^3 warp_tex", n);
  VALIDATED(nw_validate_result(name, img, 1, w_cpu->data, 1, 1, nv,
                               NwTolerance{tol_warp.abs + tex * max_step(mh), 0.0}) == 0);
  NW_TEST_CUDA(nw_poison(tmp, nv * 16));
  compose_tex_kernel<<<blocks, 256>>>(tmp, tv, u, g);
  NW_TEST_CUDA(cudaGetLastError());
  NW_TEST_CUDA(cudaDeviceSynchronize());
  g_snprintf(name, sizeof name, "%d^3 compose_tex", n);
  VALIDATED(nw_validate_result(name, (const float *)tmp, 4, c_cpu->data, 3, 3, nv,
                               NwTolerance{tol_compose.abs + tex * max_step(vh), 0.0}) == 0);
#undef VALIDATED
  NW_TEST_CUDA(cudaDestroyTextureObject(tm));
  NW_TEST_CUDA(cudaDestroyTextureObject(tv));
  NW_TEST_CUDA(cudaFreeArray(am));
  NW_TEST_CUDA(cudaFreeArray(av));
  void *bufs[] = {F, M, W, img, v, s, u, tmp, x, d_max, part, sums};
  for (size_t q = 0; q < G_N_ELEMENTS(bufs); q++)
    NW_TEST_CUDA(cudaFree(bufs[q]));
  return failed;
}

/* ---- method-level timings ---------------------------------------------------------------- */

/* Median ms per step over `iters` steps of a single-level run (after one warm-up step). */
static double time_method(const NwMethodOps *ops, int n, int iters)
{
  NwVolume *f, *m;
  make_pair(n, &f, &m);
  NwMethodInputs in = {};
  in.fixed = f;
  in.moving = m;
  NwParams *p = nw_params_new(ops->params, ops->n_params);
  nw_params_set_string(p, NULL, "levels=1", NULL);
  nw_params_set_string(p, NULL, "tolerance=0", NULL);
  nw_params_set_string(p, NULL, "iterations=100000", NULL);
  GError *error = NULL;
  void *st = ops->create(&in, p, &error);
  if (st == NULL) {
    fprintf(stderr, "create failed at %d^3: %s\n", n, error->message);
    exit(1);
  }
  NwIterationReport r;
  ops->step(st, &r, NULL);
  double *ms = g_new(double, iters);
  for (int q = 0; q < iters; q++) {
    double t = now_ms();
    if (!ops->step(st, &r, &error)) {
      fprintf(stderr, "step failed: %s\n", error->message);
      exit(1);
    }
    ms[q] = now_ms() - t;
  }
  double med = median(ms, iters);
  g_free(ms);
  ops->destroy(st);
  nw_params_free(p);
  nw_volume_free(f);
  nw_volume_free(m);
  return med;
}

/* The whole multi-level registration of the demo case (made once per resolution and kept):
 * returns seconds from create to the finished result, fills the mean AAL Dice. settings:
 * "name=value" pairs separated by commas, on top of the method's defaults. */
static double time_demo(const NwMethodOps *ops, double mm, const char *settings, double *dice,
                        int *iterations, GString *err)
{
  static NwDemoCase cases[3];
  static gboolean made[3];
  const int slot = mm < 1.5 ? 1 : 2;
  GError *error = NULL;
  if (!made[slot]) {
    NwDemoOptions o;
    nw_demo_options_init(&o);
    o.templates_dir = g_getenv("NW_TEMPLATES_DIR"); /* Colin27 carried to a GPU host */
    if (g_getenv("NW_DEMO_SEED") != NULL) /* a deformation the parameters were not tuned on */
      o.seed = (guint32)atoi(g_getenv("NW_DEMO_SEED"));
    if (!nw_demo_make(&o, mm, &cases[slot], &error)) {
      g_string_append(err, error->message);
      g_error_free(error);
      return -1;
    }
    made[slot] = TRUE;
  }
  const NwDemoCase *c = &cases[slot];
  NwMethodInputs in = {};
  in.fixed = c->fixed;
  in.moving = c->moving;
  in.fixed_labels = c->fixed_labels;
  in.moving_labels = c->moving_labels;
  NwParams *p = nw_params_new(ops->params, ops->n_params);
  gchar **kv = g_strsplit(settings, ",", -1);
  for (int q = 0; kv[q] != NULL; q++)
    if (*kv[q] != '\0' && !nw_params_set_string(p, NULL, kv[q], &error)) {
      g_string_append(err, error->message);
      g_clear_error(&error);
    }
  g_strfreev(kv);
  double t = now_ms();
  void *st = ops->create(&in, p, &error);
  NwIterationReport r = {};
  while (st != NULL && !r.finished)
    if (!ops->step(st, &r, &error))
      break;
  NwMethodResult *res = st && error == NULL ? ops->result(st, &error) : NULL;
  double sec = (now_ms() - t) / 1000.0;
  if (st != NULL)
    ops->destroy(st);
  nw_params_free(p);
  if (res == NULL) {
    g_string_append(err, error ? error->message : "failed");
    g_clear_error(&error);
    return -1;
  }
  GArray *d = nw_labels_dice(c->fixed_labels, nw_method_result_get(res, "labels"), dice);
  g_array_unref(d);
  *iterations = r.iteration;
  nw_method_result_free(res);
  return sec;
}

static GArray *parse_sizes(const char *s)
{
  GArray *a = g_array_new(FALSE, FALSE, sizeof(int));
  gchar **parts = g_strsplit(s, ",", -1);
  for (int q = 0; parts[q] != NULL; q++) {
    int v = atoi(parts[q]);
    if (v > 0)
      g_array_append_val(a, v);
  }
  g_strfreev(parts);
  return a;
}

/* The sweep's configurations: ';'-separated, or "@FILE" with one per line ('#' comments). */
static gchar **sweep_configs(const char *sweep)
{
  g_autofree char *from_file = NULL;
  if (sweep[0] == '@' && !g_file_get_contents(sweep + 1, &from_file, NULL, NULL)) {
    fprintf(stderr, "cannot read %s\n", sweep + 1);
    exit(1);
  }
  GString *list = g_string_new(NULL);
  gchar **lines = g_strsplit(from_file ? from_file : sweep, from_file ? "\n" : ";", -1);
  for (int q = 0; lines[q] != NULL; q++)
    if (lines[q][0] != '#' && lines[q][0] != '\0')
      g_string_append_printf(list, "%s%s", list->len ? ";" : "", lines[q]);
  g_strfreev(lines);
  gchar **cfg = g_strsplit(list->str, ";", -1);
  g_string_free(list, TRUE);
  return cfg;
}

/* One whole demo registration as a JSON object; the first run of a setting pays for module
 * loading, so `warm` runs it once untimed first. */
static void demo_run(JsonBuilder *b, const NwMethodOps *gpu, double mm, const char *settings,
                     gboolean warm, const char *label)
{
  double dice = 0;
  int it = 0;
  GString *err = g_string_new(NULL);
  if (warm)
    time_demo(gpu, mm, settings, &dice, &it, err);
  const double sec = time_demo(gpu, mm, settings, &dice, &it, err);
  fprintf(stderr, "%s %.0f mm %s: %.3f s, %d iterations, mean Dice %.4f %s\n", label, mm, settings,
          sec, it, dice, err->str);
  json_builder_begin_object(b);
  nw_json_member_number(b, "mm", mm);
  nw_json_member_string(b, "settings", settings);
  nw_json_member_number(b, "seconds", sec);
  nw_json_member_number(b, "iterations", it);
  nw_json_member_number(b, "mean_dice", dice);
  json_builder_end_object(b);
  g_string_free(err, TRUE);
}

int main(int argc, char **argv)
{
  const char *sizes_s = "128,192,256,320", *cpu_sizes_s = "128", *json_path = NULL;
  int iters = 20, cpu_iters = 3, validate_max = 192;
  double demo_mm = 1.0, sweep_mm = 2.0;
  const char *sweep = NULL;
  gboolean cpu_only = FALSE;
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--sizes") && a + 1 < argc)
      sizes_s = argv[++a];
    else if (!strcmp(argv[a], "--cpu-sizes") && a + 1 < argc)
      cpu_sizes_s = argv[++a];
    else if (!strcmp(argv[a], "--iters") && a + 1 < argc)
      iters = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--cpu-iters") && a + 1 < argc)
      cpu_iters = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--validate-max") && a + 1 < argc)
      validate_max = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--demo-mm") && a + 1 < argc)
      demo_mm = atof(argv[++a]);
    else if (!strcmp(argv[a], "--sweep") && a + 1 < argc)
      sweep = argv[++a];
    else if (!strcmp(argv[a], "--sweep-mm") && a + 1 < argc)
      sweep_mm = atof(argv[++a]);
    else if (!strcmp(argv[a], "--cpu-only"))
      cpu_only = TRUE;
    else if (!strcmp(argv[a], "--json") && a + 1 < argc)
      json_path = argv[++a];
    else {
      fprintf(stderr,
              "usage: %s [--sizes L] [--iters N] [--validate-max N] [--cpu-sizes L] "
              "[--cpu-iters N] [--demo-mm MM|0] [--sweep 'k=v,..;..'] [--sweep-mm MM] "
              "[--cpu-only] [--json FILE]\n",
              argv[0]);
      return 2;
    }
  }
  nw_methods_register_builtin();
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  const char *omp = g_getenv("OMP_NUM_THREADS");
  nw_json_member_string(b, "omp_num_threads", omp ? omp : "default");
  /* CPU reference. */
  const NwMethodOps *cpu = nw_method_lookup("demons", NW_DEVICE_CPU, NULL);
  g_autoptr(GArray) cs = parse_sizes(cpu_sizes_s);
  json_builder_set_member_name(b, "cpu");
  json_builder_begin_array(b);
  for (guint q = 0; q < cs->len; q++) {
    const int n = g_array_index(cs, int, q);
    const double ms = time_method(cpu, n, cpu_iters);
    fprintf(stderr, "cpu  %4d^3  %9.1f ms/iteration\n", n, ms);
    json_builder_begin_object(b);
    nw_json_member_number(b, "n", n);
    nw_json_member_number(b, "ms_per_iteration", ms);
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
  int invalid = 0; /* kernel variants that differ from their CPU twins */
  if (!cpu_only) {
    char name[256];
    if (!nw_method_cuda_available(name, sizeof name)) {
      fprintf(stderr, "no CUDA device: %s\n", name);
      return 77;
    }
    cudaDeviceProp prop;
    NW_TEST_CUDA(cudaGetDeviceProperties(&prop, 0));
    const double copy = copy_bandwidth_gbs();
    fprintf(stderr, "%s: device-to-device copy %.0f GB/s\n", prop.name, copy);
    nw_json_member_string(b, "gpu", prop.name);
    nw_json_member_number(b, "copy_GBs", copy);
    const NwMethodOps *gpu = nw_method_lookup("demons", NW_DEVICE_CUDA, NULL);
    g_autoptr(GArray) ss = parse_sizes(sizes_s);
    json_builder_set_member_name(b, "sizes");
    json_builder_begin_array(b);
    for (guint q = 0; q < ss->len; q++) {
      const int n = g_array_index(ss, int, q);
      const int failed = n <= validate_max ? validate_kernels(n) : -1;
      invalid += MAX(failed, 0);
      const double ms = time_method(gpu, n, iters);
      KernelTime kt[16];
      const int nk = time_kernels(n, kt);
      fprintf(stderr, "cuda %4d^3  %7.3f ms/iteration%s\n", n, ms,
              failed < 0 ? "  (kernels not validated at this size)"
              : failed   ? "  KERNELS DIFFER FROM THE CPU"
                         : "  (kernels validated)");
      json_builder_begin_object(b);
      nw_json_member_number(b, "n", n);
      nw_json_member_number(b, "ms_per_iteration", ms);
      json_builder_set_member_name(b, "kernels_validated");
      json_builder_add_boolean_value(b, failed == 0);
      json_builder_set_member_name(b, "kernels");
      json_builder_begin_array(b);
      for (int k = 0; k < nk; k++) {
        const double gbs = kt[k].bytes_per_voxel * (double)n * n * n / (kt[k].ms * 1e6);
        fprintf(stderr, "       %-22s %8.4f ms %7.0f GB/s %5.1f%% of copy\n", kt[k].name, kt[k].ms,
                gbs, 100.0 * gbs / copy);
        json_builder_begin_object(b);
        nw_json_member_string(b, "name", kt[k].name);
        nw_json_member_number(b, "ms", kt[k].ms);
        nw_json_member_number(b, "bytes_per_voxel", kt[k].bytes_per_voxel);
        nw_json_member_number(b, "GBs", gbs);
        nw_json_member_number(b, "pct_copy", 100.0 * gbs / copy);
        json_builder_end_object(b);
      }
      json_builder_end_array(b);
      json_builder_end_object(b);
    }
    json_builder_end_array(b);
    if (demo_mm > 0) {
      /* Default parameters with ssd and with lcc. */
      const char *settings[] = {"similarity=ssd", "similarity=lcc"};
      for (int q = 0; q < 2; q++) {
        g_autofree char *key = g_strdup_printf("demo_%d", q);
        json_builder_set_member_name(b, key);
        demo_run(b, gpu, demo_mm, settings[q], TRUE, "demo");
      }
    }
    if (sweep != NULL) {
      /* Parameter sweep on the demo case. */
      g_auto(GStrv) cfg = sweep_configs(sweep);
      json_builder_set_member_name(b, "sweep");
      json_builder_begin_array(b);
      for (int q = 0; cfg[q] != NULL; q++)
        demo_run(b, gpu, sweep_mm, cfg[q], FALSE, "sweep");
      json_builder_end_array(b);
    }
  }
  nw_json_member_number(b, "kernel_variants_invalid", invalid);
  json_builder_end_object(b);
  g_autofree char *text = nw_json_to_string(b, TRUE);
  g_autofree char *js = g_strconcat(text, "\n", NULL);
  if (json_path != NULL)
    g_file_set_contents(json_path, js, -1, NULL);
  else
    fputs(js, stdout);
  if (invalid > 0)
    fprintf(stderr, "bench_demons: %d kernel variant(s) differ from their CPU twins\n", invalid);
  return invalid > 0 ? 1 : 0;
}
