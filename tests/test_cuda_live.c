/* test_cuda_live.c — the GPU halves of the live view without GL: marching cubes on the GPU
 * against the CPU reference (core/marching_cubes.h), and the live front's ordering (a
 * writer thread publishing while the test thread reads: every read sees one whole frame,
 * iterations never go back, a grid change is announced). Skips (77) without a CUDA device. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <string.h>

#include "marching_cubes.h"
#include "nw_live.h"
#include "nw_marching_cubes_cuda.h"
#include "testutil.h"

#define CUDA_OK(call) g_assert_cmpint((call), ==, cudaSuccess)

/* ---- marching cubes -------------------------------------------------------------------- */

/* Sphere-like blob plus a tilted ripple, radius ~n/3: curved everywhere, no plateaus. */
static NwVolume *blob(int nx, int ny, int nz, gboolean with_nan)
{
  NwVolume *v = nw_volume_new(nx, ny, nz, 1, NULL);
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++) {
        double x = i - 0.5 * nx, y = j - 0.45 * ny, z = k - 0.55 * nz;
        double r = sqrt(x * x + y * y + z * z) / (0.33 * nx);
        float f = (float)(1.0 - r + 0.08 * sin(0.7 * x + 0.3 * y) * cos(0.5 * z));
        if (with_nan && i == nx / 2 && j == ny / 3)
          f = NAN;
        v->data[nw_volume_index(v, i, j, k)] = f;
      }
  return v;
}

/* The CPU surface as a soup: triangle t corner c -> position and normal. */
static void check_same_soup(const NwSurface *s, const float *gpu, size_t n)
{
  g_assert_cmpint((size_t)s->n_triangles, >=, n);
  double max_p = 0, max_n = 0;
  for (size_t t = 0; t < n; t++)
    for (int c = 0; c < 3; c++) {
      guint32 vi = s->triangles[t * 3 + c];
      const float *g = gpu + (t * 3 + c) * 6;
      for (int d = 0; d < 3; d++) {
        max_p = MAX(max_p, fabs(g[d] - s->vertices[vi * 3 + d]));
        max_n = MAX(max_n, fabs(g[3 + d] - s->normals[vi * 3 + d]));
      }
    }
  g_test_message("max |position diff| %.3g mm, max |normal diff| %.3g", max_p, max_n);
  g_assert_cmpfloat(max_p, <, 1e-4);
  g_assert_cmpfloat(max_n, <, 1e-3);
}

static float *run_gpu(const NwVolume *v, float iso, size_t max_tri, size_t *total, size_t *written)
{
  float *d_img = NULL, *d_out = NULL;
  size_t n = nw_volume_n_voxels(v);
  CUDA_OK(cudaMalloc((void **)&d_img, n * sizeof(float)));
  CUDA_OK(cudaMemcpy(d_img, v->data, n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMalloc((void **)&d_out, MAX(max_tri, 1) * 18 * sizeof(float)));
  NwMcCuda *mc = nw_mc_cuda_new();
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_mc_cuda_run(mc, d_img, v->nx, v->ny, v->nz, v->vox_to_ras, iso, d_out,
                               max_tri, total, written, NULL, &error));
  g_assert_no_error(error);
  float *h = g_new0(float, MAX(*written, 1) * 18);
  CUDA_OK(cudaMemcpy(h, d_out, *written * 18 * sizeof(float), cudaMemcpyDeviceToHost));
  nw_mc_cuda_free(mc);
  cudaFree(d_img);
  cudaFree(d_out);
  return h;
}

static void check_affine(const double affine[16], gboolean with_nan)
{
  g_autoptr(NwVolume) v = blob(34, 29, 31, with_nan);
  nw_volume_set_affine(v, affine);
  g_autoptr(GError) error = NULL;
  g_autoptr(NwSurface) s = nw_marching_cubes(v, 0.0f, &error);
  g_assert_no_error(error);
  g_assert_cmpint(s->n_triangles, >, 1000);
  size_t total = 0, written = 0;
  g_autofree float *gpu = run_gpu(v, 0.0f, (size_t)s->n_triangles + 10, &total, &written);
  g_assert_cmpuint(total, ==, (size_t)s->n_triangles);
  g_assert_cmpuint(written, ==, total);
  check_same_soup(s, gpu, written);

  /* a buffer too small: the count is still whole, the first triangles are the CPU's first */
  size_t t2 = 0, w2 = 0;
  g_autofree float *part = run_gpu(v, 0.0f, 100, &t2, &w2);
  g_assert_cmpuint(t2, ==, total);
  g_assert_cmpuint(w2, ==, 100);
  check_same_soup(s, part, w2);
}

static void test_mc_parity(void)
{
  if (!nw_test_have_cuda()) {
    g_test_skip("no CUDA device");
    return;
  }
  const double aniso[16] = {1.5, 0, 0, -20, 0, 0.9, 0, 10, 0, 0, 2.0, -5, 0, 0, 0, 1};
  const double oblique[16] = {0.9, 0.3, 0, -2, -0.2, 1.1, 0.1, 4, 0.05, 0, 1.3, 1, 0, 0, 0, 1};
  const double mirror[16] = {-1.2, 0, 0, 40, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  check_affine(aniso, FALSE);
  check_affine(oblique, FALSE);
  check_affine(mirror, FALSE);
  check_affine(aniso, TRUE); /* NaN voxels are outside, as on the CPU */
}

static void test_mc_nothing(void)
{
  if (!nw_test_have_cuda()) {
    g_test_skip("no CUDA device");
    return;
  }
  g_autoptr(NwVolume) v = blob(16, 16, 16, FALSE);
  size_t total = 7, written = 7;
  g_autofree float *h = run_gpu(v, 50.0f, 10, &total, &written);
  g_assert_cmpuint(total, ==, 0);
  g_assert_cmpuint(written, ==, 0);
}

/* ---- the live front ---------------------------------------------------------------------- */

#define FRONT_N 32
#define FRONT_FRAMES 60

typedef struct {
  NwLiveFront *front;
  NwVolume *like, *like_small;
  gint done;
} Writer;

/* Frame `it`: image voxel i = i + 1000 it, field voxel i = (it, i, -it, 7). The last frame
 * is on a smaller grid. */
static gpointer writer_thread(gpointer data)
{
  Writer *w = data;
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const size_t n = (size_t)FRONT_N * FRONT_N * FRONT_N;
  float *d_img, *d_field, *h_img = g_new(float, n), *h_field = g_new(float, n * 4);
  CUDA_OK(cudaMalloc((void **)&d_img, n * sizeof(float)));
  CUDA_OK(cudaMalloc((void **)&d_field, n * 4 * sizeof(float)));
  for (int it = 1; it <= FRONT_FRAMES; it++) {
    for (size_t i = 0; i < n; i++) {
      h_img[i] = (float)i + 1000.0f * it;
      h_field[i * 4] = (float)it, h_field[i * 4 + 1] = (float)i;
      h_field[i * 4 + 2] = (float)-it, h_field[i * 4 + 3] = 7.0f;
    }
    /* the writer's own buffers are rewritten right after publishing, on its stream: the
     * front must have its copy by then (stream order) */
    CUDA_OK(cudaMemcpyAsync(d_img, h_img, n * sizeof(float), cudaMemcpyHostToDevice, s));
    CUDA_OK(cudaMemcpyAsync(d_field, h_field, n * 16, cudaMemcpyHostToDevice, s));
    const NwVolume *like = it == FRONT_FRAMES ? w->like_small : w->like;
    g_autoptr(GError) error = NULL;
    g_assert_true(nw_live_front_publish(w->front, like, d_img, d_field, it, s, &error));
    g_assert_no_error(error);
    CUDA_OK(cudaStreamSynchronize(s));
  }
  cudaFree(d_img);
  cudaFree(d_field);
  cudaStreamDestroy(s);
  g_free(h_img);
  g_free(h_field);
  g_atomic_int_set(&w->done, 1);
  return NULL;
}

static void test_front(void)
{
  if (!nw_test_have_cuda()) {
    g_test_skip("no CUDA device");
    return;
  }
  g_autoptr(GError) error = NULL;
  Writer w = {.front = nw_live_front_new(&error)};
  g_assert_no_error(error);
  g_assert_cmpint(nw_live_front_iteration(w.front), ==, -1);
  w.like = nw_volume_new(FRONT_N, FRONT_N, FRONT_N, 1, NULL);
  w.like_small = nw_volume_new(FRONT_N / 2, FRONT_N, FRONT_N, 1, NULL);
  nw_volume_set_spacing(w.like_small, 2, 1, 1);
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const size_t n = (size_t)FRONT_N * FRONT_N * FRONT_N;
  float *img = g_new(float, n), *field = g_new(float, n * 4);
  GThread *t = g_thread_new("writer", writer_thread, &w);
  int last = -1, reads = 0;
  guint64 first_generation = 0;
  for (;;) {
    gboolean done = g_atomic_int_get(&w.done);
    NwLiveView v;
    nw_live_front_begin_read(w.front, s, &v);
    if (v.iteration >= 0) {
      const size_t nv = (size_t)v.nx * v.ny * v.nz;
      CUDA_OK(cudaMemcpyAsync(img, v.image, nv * sizeof(float), cudaMemcpyDeviceToHost, s));
      CUDA_OK(cudaMemcpyAsync(field, v.field, nv * 16, cudaMemcpyDeviceToHost, s));
    }
    nw_live_front_end_read(w.front, s);
    CUDA_OK(cudaStreamSynchronize(s));
    if (v.iteration >= 0) {
      g_assert_cmpint(v.iteration, >=, last); /* never backwards */
      last = v.iteration;
      if (first_generation == 0)
        first_generation = v.grid_generation;
      const size_t nv = (size_t)v.nx * v.ny * v.nz;
      for (size_t i = 0; i < nv; i += 97) { /* one whole frame: image and field agree */
        g_assert_cmpfloat(img[i], ==, (float)i + 1000.0f * v.iteration);
        g_assert_cmpfloat(field[i * 4], ==, (float)v.iteration);
        g_assert_cmpfloat(field[i * 4 + 1], ==, (float)i);
      }
      reads++;
    }
    if (done)
      break;
  }
  g_thread_join(t);
  /* the last frame is on the smaller grid, announced by a new generation */
  NwLiveView v;
  nw_live_front_begin_read(w.front, s, &v);
  nw_live_front_end_read(w.front, s);
  g_assert_cmpint(v.iteration, ==, FRONT_FRAMES);
  g_assert_cmpint(v.nx, ==, FRONT_N / 2);
  g_assert_cmpfloat(v.vox_to_ras[0], ==, 2.0);
  g_assert_cmpuint(v.grid_generation, >, first_generation);
  g_assert_cmpint(nw_live_front_iteration(w.front), ==, FRONT_FRAMES);
  g_test_message("%d consistent reads", reads);
  g_assert_cmpint(reads, >, 1);
  cudaStreamDestroy(s);
  nw_live_front_free(w.front);
  nw_volume_free(w.like);
  nw_volume_free(w.like_small);
  g_free(img);
  g_free(field);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  if (!nw_test_have_cuda())
    return NW_TEST_SKIP;
  g_test_add_func("/cuda/mc/parity", test_mc_parity);
  g_test_add_func("/cuda/mc/nothing", test_mc_nothing);
  g_test_add_func("/cuda/live/front", test_front);
  return g_test_run();
}
