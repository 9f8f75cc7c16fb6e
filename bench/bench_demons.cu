/* bench_demons.cu — log-demons benchmark (not a test): time per iteration of the CUDA method
 * at several sizes, the effective bandwidth of every kernel of an iteration against the
 * device-to-device copy bandwidth measured in the same run, trilinear gathers through the
 * read-only cache (__ldg, the default) against a texture object, the CPU reference's time per
 * iteration, and the whole 3-level registration of the demo pair. JSON on stdout (or --json
 * FILE); a short table on stderr.
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

#include "demo.h"
#include "demons_kernels.cuh"
#include "demons_method.h"
#include "field.h"
#include "field_cuda.cuh"
#include "gauss_cuda.cuh"
#include "method.h"
#include "method_table.h"
#include "smooth.h"

#define CK(call)                                                                               \
  do {                                                                                         \
    cudaError_t e_ = (call);                                                                   \
    if (e_ != cudaSuccess) {                                                                   \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));   \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

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
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  CK(cudaMemset(a, 1, bytes));
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));
  double ms[10];
  for (int r = -2; r < 10; r++) {
    CK(cudaEventRecord(t0));
    CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice));
    CK(cudaEventRecord(t1));
    CK(cudaEventSynchronize(t1));
    float m;
    CK(cudaEventElapsedTime(&m, t0, t1));
    if (r >= 0)
      ms[r] = m;
  }
  CK(cudaFree(a));
  CK(cudaFree(b));
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
  CK(cudaCreateTextureObject(&t, &res, &td, NULL));
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
  CK(cudaMemcpy3DAsync(&p, st));
}

struct KernelTime {
  const char *name;
  double bytes_per_voxel, ms;
};

#define TIME(label, bpv, ...)                                                                 \
  do {                                                                                         \
    double ms_[15];                                                                            \
    for (int r_ = -3; r_ < 15; r_++) {                                                         \
      CK(cudaEventRecord(t0, st));                                                             \
      __VA_ARGS__;                                                                             \
      CK(cudaEventRecord(t1, st));                                                             \
      CK(cudaEventSynchronize(t1));                                                            \
      float m_;                                                                                \
      CK(cudaEventElapsedTime(&m_, t0, t1));                                                   \
      if (r_ >= 0)                                                                             \
        ms_[r_] = m_;                                                                          \
    }                                                                                          \
    kt[nk++] = KernelTime{label, (double)(bpv), median(ms_, 15)};                              \
  } while (0)

static int time_kernels(int n, KernelTime *kt)
{
  NwVolume *fh, *mh;
  make_pair(n, &fh, &mh);
  const NwGrid g = {n, n, n};
  const size_t nv = (size_t)g.n();
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  float *F, *M, *W, *img, *d_max;
  float4 *v, *s, *u, *tmp;
  NwDemonsSums *part, *sums;
  CK(cudaMalloc(&F, nv * 4));
  CK(cudaMalloc(&M, nv * 4));
  CK(cudaMalloc(&W, nv * 4));
  CK(cudaMalloc(&img, nv * 4));
  CK(cudaMalloc(&v, nv * 16));
  CK(cudaMalloc(&s, nv * 16));
  CK(cudaMalloc(&u, nv * 16));
  CK(cudaMalloc(&tmp, nv * 16));
  CK(cudaMalloc(&d_max, 4));
  CK(cudaMalloc(&part, NW_DEMONS_FIG_BLOCKS * sizeof(NwDemonsSums)));
  CK(cudaMalloc(&sums, sizeof(NwDemonsSums)));
  CK(cudaMemcpy(F, fh->data, nv * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(M, mh->data, nv * 4, cudaMemcpyHostToDevice));
  /* A realistic state: a smooth velocity of a few voxels, s = exp(v), W = M ∘ s. */
  NwVolume *vh = nw_volume_new(n, n, n, 3, NULL);
  nw_demo_smooth_field(vh, 3.0, 11);
  CK(nw_field_upload(v, tmp, vh->data, g, st));
  const int nsq = nw_field_exp_squarings_for_norm(nw_field_max_norm(vh));
  CK(nw_exp_cuda(s, tmp, v, 1.0f, nsq, g, st));
  CK(nw_warp_cuda(W, M, s, false, g, st));
  NwVolumeStats fs;
  nw_volume_stats(fh, &fs);
  NwDemonsLevelConst lc = {(float)fs.mean, (double)(fs.max - fs.min) * (fs.max - fs.min)};
  NwGaussKernel k1[3], k15[3];
  for (int a = 0; a < 3; a++) {
    nw_gauss_kernel(&k1[a], 1.0);
    nw_gauss_kernel(&k15[a], 1.5);
  }
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));
  int nk = 0;
  TIME("update", 4 + 4 + 16, CK(nw_demons_update_cuda(u, F, W, NULL, NULL, 0, 1.0f, lc, g, st)));
  TIME("gauss3_sigma1", 3 * 32, CK(nw_gauss3_float4(&u, &tmp, g, k1, NULL, st)));
  TIME("gauss3_sigma1.5", 3 * 32, CK(nw_gauss3_float4(&u, &tmp, g, k15, NULL, st)));
  TIME("gauss3_sigma1.5_max", 3 * 32, CK(nw_gauss3_float4(&u, &tmp, g, k15, d_max, st)));
  TIME("max_norm", 16, CK(nw_max_norm_cuda(d_max, u, g, st)));
  TIME("compose_ldg", 48, CK(nw_compose_cuda(tmp, v, 1.0f, u, 1.0f, g, st)));
  /* A squaring gathers from the field it reads: 16 B read + 16 B written per voxel. */
  TIME("exp", 32.0 * nsq, CK(nw_exp_cuda(s, tmp, v, 1.0f, nsq, g, st)));
  TIME("warp_ldg", 24, CK(nw_warp_cuda(W, M, s, false, g, st)));
  TIME("sums", 24, CK(nw_demons_sums_cuda(sums, part, F, W, NULL, s, NULL, NULL, lc, g, st)));
  TIME("warp_sums_fused", 28, CK(nw_demons_sums_cuda(sums, part, F, W, M, s, NULL, NULL, lc, g, st)));
  /* Texture variants. */
  cudaChannelFormatDesc cf = cudaCreateChannelDesc<float>(), cf4 = cudaCreateChannelDesc<float4>();
  cudaArray_t am, av;
  CK(cudaMalloc3DArray(&am, &cf, make_cudaExtent(n, n, n)));
  CK(cudaMalloc3DArray(&av, &cf4, make_cudaExtent(n, n, n)));
  copy_to_array(am, M, 4, g, st);
  cudaTextureObject_t tm = make_texture(am), tv = make_texture(av);
  const unsigned blocks = (unsigned)((g.n() + 255) / 256);
  TIME("warp_tex", 24, warp_tex_kernel<<<blocks, 256, 0, st>>>(img, tm, s, g));
  TIME("compose_tex_incl_copy", 48 + 32, {
    copy_to_array(av, v, 16, g, st);
    compose_tex_kernel<<<blocks, 256, 0, st>>>(tmp, tv, u, g);
  });
  /* Accuracy of hardware filtering against the exact gather (8-bit interpolation weights). */
  g_autoptr(NwVolume) a = nw_volume_new(n, n, n, 1, NULL);
  g_autoptr(NwVolume) b = nw_volume_new(n, n, n, 1, NULL);
  CK(cudaMemcpy(a->data, W, nv * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(b->data, img, nv * 4, cudaMemcpyDeviceToHost));
  double dmax = 0;
  for (size_t e = 0; e < nv; e++)
    dmax = fmax(dmax, fabs(a->data[e] - b->data[e]));
  fprintf(stderr, "  %d^3: texture-filtered warp differs from the exact gather by up to %.3g\n", n,
          dmax);
  CK(cudaDestroyTextureObject(tm));
  CK(cudaDestroyTextureObject(tv));
  CK(cudaFreeArray(am));
  CK(cudaFreeArray(av));
  void *bufs[] = {F, M, W, img, v, s, u, tmp, d_max, part, sums};
  for (size_t q = 0; q < G_N_ELEMENTS(bufs); q++)
    CK(cudaFree(bufs[q]));
  CK(cudaStreamDestroy(st));
  nw_volume_free(fh);
  nw_volume_free(mh);
  nw_volume_free(vh);
  return nk;
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

int main(int argc, char **argv)
{
  const char *sizes_s = "128,192,256,320", *cpu_sizes_s = "128", *json_path = NULL;
  int iters = 20, cpu_iters = 3;
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
      fprintf(stderr, "usage: %s [--sizes L] [--iters N] [--cpu-sizes L] [--cpu-iters N] "
                      "[--demo-mm MM|0] [--sweep 'k=v,..;..'] [--sweep-mm MM] [--cpu-only] [--json FILE]\n", argv[0]);
      return 2;
    }
  }
  nw_methods_register_builtin();
  GString *js = g_string_new("{\n");
  const char *omp = g_getenv("OMP_NUM_THREADS");
  g_string_append_printf(js, "  \"omp_num_threads\": \"%s\",\n", omp ? omp : "default");
  /* CPU reference. */
  const NwMethodOps *cpu = nw_method_lookup("demons", NW_DEVICE_CPU, NULL);
  GArray *cs = parse_sizes(cpu_sizes_s);
  g_string_append(js, "  \"cpu\": [");
  for (guint q = 0; q < cs->len; q++) {
    int n = g_array_index(cs, int, q);
    double ms = time_method(cpu, n, cpu_iters);
    fprintf(stderr, "cpu  %4d^3  %9.1f ms/iteration\n", n, ms);
    g_string_append_printf(js, "%s{\"n\": %d, \"ms_per_iteration\": %.3f}", q ? ", " : "", n, ms);
  }
  g_string_append(js, "]");
  if (!cpu_only) {
    char name[256];
    if (!nw_method_cuda_available(name, sizeof name)) {
      fprintf(stderr, "no CUDA device: %s\n", name);
      return 77;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const double copy = copy_bandwidth_gbs();
    fprintf(stderr, "%s: device-to-device copy %.0f GB/s\n", prop.name, copy);
    g_string_append_printf(js, ",\n  \"gpu\": \"%s\",\n  \"copy_GBs\": %.1f,\n  \"sizes\": [\n",
                           prop.name, copy);
    const NwMethodOps *gpu = nw_method_lookup("demons", NW_DEVICE_CUDA, NULL);
    GArray *ss = parse_sizes(sizes_s);
    for (guint q = 0; q < ss->len; q++) {
      int n = g_array_index(ss, int, q);
      double ms = time_method(gpu, n, iters);
      KernelTime kt[16];
      int nk = time_kernels(n, kt);
      fprintf(stderr, "cuda %4d^3  %7.3f ms/iteration\n", n, ms);
      g_string_append_printf(js, "    {\"n\": %d, \"ms_per_iteration\": %.4f, \"kernels\": [", n,
                             ms);
      for (int k = 0; k < nk; k++) {
        double gbs = kt[k].bytes_per_voxel * (double)n * n * n / (kt[k].ms * 1e6);
        fprintf(stderr, "       %-22s %8.4f ms %7.0f GB/s %5.1f%% of copy\n", kt[k].name,
                kt[k].ms, gbs, 100.0 * gbs / copy);
        g_string_append_printf(js,
                               "%s\n      {\"name\": \"%s\", \"ms\": %.4f, \"bytes_per_voxel\": "
                               "%.0f, \"GBs\": %.1f, \"pct_copy\": %.1f}",
                               k ? "," : "", kt[k].name, kt[k].ms, kt[k].bytes_per_voxel, gbs,
                               100.0 * gbs / copy);
      }
      g_string_append_printf(js, "]}%s\n", q + 1 < ss->len ? "," : "");
    }
    g_string_append(js, "  ]");
    if (demo_mm > 0) {
      /* Default parameters with ssd and with lcc; the first run pays for module loading. */
      const char *settings[] = {"similarity=ssd", "similarity=lcc"};
      for (int q = 0; q < 2; q++) {
        double dice = 0;
        int it = 0;
        GString *err = g_string_new(NULL);
        time_demo(gpu, demo_mm, settings[q], &dice, &it, err);
        double sec = time_demo(gpu, demo_mm, settings[q], &dice, &it, err);
        fprintf(stderr, "demo %.0f mm %s: %.3f s, %d iterations, mean Dice %.4f %s\n", demo_mm,
                settings[q], sec, it, dice, err->str);
        g_string_append_printf(js,
                               ",\n  \"demo_%d\": {\"mm\": %.1f, \"settings\": \"%s\", "
                               "\"seconds\": %.4f, \"iterations\": %d, \"mean_dice\": %.4f}",
                               q, demo_mm, settings[q], sec, it, dice);
        g_string_free(err, TRUE);
      }
    }
    if (sweep != NULL) {
      /* Parameter sweep on the demo case: configurations separated by ';'. */
      /* "@FILE": one configuration per line, '#' comments. */
      g_autofree char *from_file = NULL;
      if (sweep[0] == '@' && !g_file_get_contents(sweep + 1, &from_file, NULL, NULL)) {
        fprintf(stderr, "cannot read %s\n", sweep + 1);
        return 1;
      }
      GString *list = g_string_new(NULL);
      gchar **lines = g_strsplit(from_file ? from_file : sweep, from_file ? "\n" : ";", -1);
      for (int q = 0; lines[q] != NULL; q++)
        if (lines[q][0] != '#' && lines[q][0] != '\0')
          g_string_append_printf(list, "%s%s", list->len ? ";" : "", lines[q]);
      g_strfreev(lines);
      gchar **cfg = g_strsplit(list->str, ";", -1);
      g_string_free(list, TRUE);
      g_string_append(js, ",\n  \"sweep\": [");
      for (int q = 0; cfg[q] != NULL; q++) {
        double dice = 0;
        int it = 0;
        GString *err = g_string_new(NULL);
        double sec = time_demo(gpu, sweep_mm, cfg[q], &dice, &it, err);
        fprintf(stderr, "sweep %.0f mm  dice %.4f  %6.3f s  %4d it  %s %s\n", sweep_mm, dice, sec,
                it, cfg[q], err->str);
        g_string_append_printf(js,
                               "%s\n    {\"mm\": %.1f, \"settings\": \"%s\", \"seconds\": "
                               "%.4f, \"iterations\": %d, \"mean_dice\": %.4f}",
                               q ? "," : "", sweep_mm, cfg[q], sec, it, dice);
        g_string_free(err, TRUE);
      }
      g_string_append(js, "]");
      g_strfreev(cfg);
    }
  }
  g_string_append(js, "\n}\n");
  if (json_path != NULL)
    g_file_set_contents(json_path, js->str, -1, NULL);
  else
    fputs(js->str, stdout);
  g_string_free(js, TRUE);
  return 0;
}
