/* test_cuda_live_source.c — host frames of a CUDA job for views that cannot take interop:
 * the GPU reduction and download of the live front (nw_live_front_download) against its CPU
 * twin (core/live_reduce.h) — same dims, affine and voxels —, volumes given back
 * (nw_live_front_recycle) filled by the next download with its frame, and the frame source
 * (render/live_source.h) driving a CUDA demons job from a simulated display: frames only
 * when asked, reduced to the voxel budget, downloaded by the source's thread while the
 * worker goes on. Skips (77) without a CUDA device. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <string.h>

#include "job.h"
#include "live_reduce.h"
#include "live_source.h"
#include "nw_live.h"
#include "testutil.h"

#define CUDA_OK(call) g_assert_cmpint((call), ==, cudaSuccess)

/* img (n floats) and u (n float4: xyz from u, w poisoned with NaN, which must never be read
 * into xyz) into the device buffers, allocated when NULL. */
static void to_device(const NwVolume *img, const NwVolume *u, float **d_img, float **d_u)
{
  const size_t n = nw_volume_n_voxels(img);
  float *h4 = g_new(float, 4 * n);
  for (size_t i = 0; i < n; i++) {
    memcpy(h4 + 4 * i, u->data + 3 * i, 3 * sizeof(float));
    h4[4 * i + 3] = NAN;
  }
  if (*d_img == NULL)
    CUDA_OK(cudaMalloc((void **)d_img, n * sizeof(float)));
  if (*d_u == NULL)
    CUDA_OK(cudaMalloc((void **)d_u, 4 * n * sizeof(float)));
  CUDA_OK(cudaMemcpy(*d_img, img->data, n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(*d_u, h4, 4 * n * sizeof(float), cudaMemcpyHostToDevice));
  g_free(h4);
}

/* Publish the frame of iteration on the device (d_img, d_u, on img's grid), then download it
 * whole (a front of host frames has reduced it already) into out. */
static void publish_and_download(NwLiveFront *front, const NwVolume *img, const float *d_img,
                                 const float *d_u, int iteration, NwFrame *out)
{
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_live_front_publish(front, img, d_img, d_u, iteration, NULL, &error));
  g_assert_true(nw_live_front_download(front, 1, out, &error));
  g_assert_no_error(error);
  g_assert_cmpint(out->iteration, ==, iteration);
}

/* Random image and field on an oblique grid, published; then downloads at factors 1, 2 and 3
 * equal nw_live_reduce. */
static void test_download_parity(void)
{
  const int nx = 37, ny = 29, nz = 23;
  g_autoptr(NwVolume) img = nw_test_volume(nx, ny, nz, 1, 11);
  g_autoptr(NwVolume) u = nw_test_volume(nx, ny, nz, 3, 12);
  const double a[16] = {0.9, 0.2, 0, -30, -0.1, 1.1, 0.3, 12, 0.05, 0, 1.7, 4, 0, 0, 0, 1};
  nw_volume_set_affine(img, a);
  nw_volume_set_affine(u, a);
  float *d_img = NULL, *d_u = NULL;
  to_device(img, u, &d_img, &d_u);
  g_autoptr(GError) error = NULL;
  NwLiveFront *front = nw_live_front_new(&error);
  g_assert_no_error(error);
  NwFrame none;
  g_assert_true(nw_live_front_download(front, 2, &none, &error)); /* nothing published yet */
  g_assert_cmpint(none.iteration, ==, -1);
  g_assert_null(none.image);
  g_assert_true(nw_live_front_publish(front, img, d_img, d_u, 7, NULL, &error));
  g_assert_no_error(error);
  for (int r = 1; r <= 3; r++) {
    NwFrame f;
    g_assert_true(nw_live_front_download(front, r, &f, &error));
    g_assert_no_error(error);
    g_autoptr(NwVolume) want_img = nw_live_reduce(img, r, FALSE, NULL);
    g_autoptr(NwVolume) want_u = nw_live_reduce(u, r, TRUE, NULL);
    g_assert_cmpint(f.iteration, ==, 7);
    g_assert_nonnull(f.image);
    g_assert_nonnull(f.field);
    g_assert_cmpint(f.image->nx, ==, want_img->nx);
    g_assert_cmpint(f.image->ny, ==, want_img->ny);
    g_assert_cmpint(f.image->nz, ==, want_img->nz);
    g_assert_cmpint(f.field->nc, ==, 3);
    for (int k = 0; k < 16; k++) {
      g_assert_cmpfloat(f.image->vox_to_ras[k], ==, want_img->vox_to_ras[k]);
      g_assert_cmpfloat(f.field->vox_to_ras[k], ==, want_u->vox_to_ras[k]);
    }
    /* the same float sums in the same order: equal up to the last bit, 1e-6 allowed */
    const double di = nw_test_max_abs_diff(f.image, want_img);
    const double du = nw_test_max_abs_diff(f.field, want_u);
    g_test_message("factor %d: %dx%dx%d, max |image diff| %.3g, max |field diff| %.3g", r,
                   f.image->nx, f.image->ny, f.image->nz, di, du);
    g_assert_cmpfloat(di, <=, 1e-6);
    g_assert_cmpfloat(du, <=, 1e-6);
    nw_frame_clear(&f);
  }
  /* a front of host frames reduces at publish: the download copies the reduced frame */
  nw_live_front_set_reduce(front, 3000);
  const int r = nw_live_reduce_choose(nx, ny, nz, 3000);
  g_assert_cmpint(r, >, 1);
  NwFrame f;
  publish_and_download(front, img, d_img, d_u, 8, &f);
  g_autoptr(NwVolume) want_img = nw_live_reduce(img, r, FALSE, NULL);
  g_autoptr(NwVolume) want_u = nw_live_reduce(u, r, TRUE, NULL);
  g_assert_cmpint(f.image->nx, ==, want_img->nx);
  g_assert_cmpint(f.field->nz, ==, want_u->nz);
  for (int k = 0; k < 16; k++)
    g_assert_cmpfloat(f.image->vox_to_ras[k], ==, want_img->vox_to_ras[k]);
  g_assert_cmpfloat(nw_test_max_abs_diff(f.image, want_img), <=, 1e-6);
  g_assert_cmpfloat(nw_test_max_abs_diff(f.field, want_u), <=, 1e-6);
  NwLiveView v;
  nw_live_front_begin_read(front, NULL, &v);
  nw_live_front_end_read(front, NULL);
  g_assert_cmpint(v.reduce, ==, r);
  nw_frame_clear(&f);
  nw_live_front_prepare_download(front); /* the next download reuses made volumes */
  g_assert_true(nw_live_front_download(front, 1, &f, &error));
  g_assert_cmpfloat(nw_test_max_abs_diff(f.image, want_img), <=, 1e-6);
  nw_frame_clear(&f);
  nw_live_front_free(front);
  cudaFree(d_img);
  cudaFree(d_u);
}

/* The memory of v is pinned host memory of CUDA's: the download copies into it directly. */
static void assert_pinned(const NwVolume *v)
{
  struct cudaPointerAttributes at;
  CUDA_OK(cudaPointerGetAttributes(&at, v->data));
  g_assert_cmpint(at.type, ==, cudaMemoryTypeHost);
  g_assert_nonnull(v->allocator);
}

/* A front of host frames: the volumes of a download given back are the ones the next
 * download fills (the same memory: no allocation per frame), pinned, and they hold the next
 * frame's values, not the ones they held. */
static void test_download_into_recycled(void)
{
  const int nx = 30, ny = 20, nz = 10;
  g_autoptr(NwVolume) img = nw_test_volume(nx, ny, nz, 1, 21);
  g_autoptr(NwVolume) u = nw_test_volume(nx, ny, nz, 3, 22);
  g_autoptr(NwVolume) img2 = nw_test_volume(nx, ny, nz, 1, 23);
  g_autoptr(NwVolume) u2 = nw_test_volume(nx, ny, nz, 3, 24);
  float *d_img = NULL, *d_u = NULL;
  to_device(img, u, &d_img, &d_u);
  g_autoptr(GError) error = NULL;
  NwLiveFront *front = nw_live_front_new(&error);
  g_assert_no_error(error);
  nw_live_front_set_reduce(front, 2000);
  const int r = nw_live_reduce_choose(nx, ny, nz, 2000);
  g_assert_cmpint(r, >, 1);
  NwFrame first;
  publish_and_download(front, img, d_img, d_u, 1, &first);
  const float *image_data = first.image->data, *field_data = first.field->data;
  nw_live_front_recycle(front, g_steal_pointer(&first.image));
  nw_live_front_recycle(front, g_steal_pointer(&first.field));
  nw_live_front_prepare_download(front); /* as the downloader does after each download */
  to_device(img2, u2, &d_img, &d_u);
  NwFrame next;
  publish_and_download(front, img2, d_img, d_u, 2, &next);
  g_assert_true(next.image->data == image_data);
  g_assert_true(next.field->data == field_data);
  assert_pinned(next.image);
  assert_pinned(next.field);
  g_autoptr(NwVolume) want_img = nw_live_reduce(img2, r, FALSE, NULL);
  g_autoptr(NwVolume) want_u = nw_live_reduce(u2, r, TRUE, NULL);
  g_autoptr(NwVolume) old_img = nw_live_reduce(img, r, FALSE, NULL);
  g_assert_cmpfloat(nw_test_max_abs_diff(next.image, want_img), <=, 1e-6);
  g_assert_cmpfloat(nw_test_max_abs_diff(next.field, want_u), <=, 1e-6);
  g_assert_cmpfloat(nw_test_max_abs_diff(want_img, old_img), >, 1e-3); /* frames that differ */
  for (int k = 0; k < 16; k++)
    g_assert_cmpfloat(next.field->vox_to_ras[k], ==, want_u->vox_to_ras[k]);
  nw_frame_clear(&first);
  nw_frame_clear(&next);
  nw_live_front_free(front);
  cudaFree(d_img);
  cudaFree(d_u);
}

/* ---- a CUDA demons job driven by a simulated 100 Hz display on the host path ------------ */

static void on_frame(NwJob *job, NwFrame *frame, gpointer data)
{
  nw_live_source_push(*(NwLiveSource **)data, frame);
}

typedef struct {
  int taken, nx, last_iteration;
  NwLiveSource *src; /* where frames go back once "drawn" */
} Taken;

static void on_take(NwFrame *frame, gpointer data)
{
  Taken *t = data; /* display thread only */
  t->taken++;
  t->nx = frame->image->nx;
  t->last_iteration = frame->iteration;
  g_assert_nonnull(frame->field);
  nw_live_source_recycle_frame(t->src, frame); /* the next download refills its volumes */
}

static void test_source_host_frames(void)
{
  g_autoptr(GError) error = NULL;
  const NwMethodOps *ops = nw_method_lookup("demons", NW_DEVICE_CUDA, &error);
  g_assert_no_error(error);
  g_autoptr(NwVolume) fixed = nw_test_volume(64, 64, 64, 1, 3);
  g_autoptr(NwVolume) moving = nw_test_volume(64, 64, 64, 1, 4);
  g_autoptr(NwParams) p = nw_params_new(ops->params, ops->n_params);
  g_assert_true(nw_params_set(p, "levels", 1, NULL));
  g_assert_true(nw_params_set(p, "iterations", 100000, NULL));
  g_assert_true(nw_params_set(p, "tolerance", 0, NULL));
  Taken taken = {0};
  /* budget 40^3 voxels: 64^3 frames come reduced by 2 (32^3) */
  NwLiveSource *src = nw_live_source_new(ops, FALSE, 40 * 40 * 40, NULL, on_take, &taken);
  taken.src = src;
  g_assert_cmpint(nw_live_source_path(src), ==, NW_LIVE_PATH_HOST);
  g_assert_nonnull(nw_live_source_front(src)); /* the job publishes on the GPU... */
  NwMethodInputs in = {.fixed = fixed, .moving = moving};
  const NwJobCallbacks cb = {NULL, on_frame, NULL};
  NwJob *job = nw_job_new(ops, &in, p, 0, &cb, &src);
  nw_job_set_live(job, nw_live_source_front(src));
  nw_live_source_set_job(src, job);
  nw_job_start(job, FALSE);
  /* 100 Hz until 20 frames were drawn (a minute at most: compute-sanitizer is slow) */
  int display_frames = 0;
  const gint64 end = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
  while (taken.taken < 20 && g_get_monotonic_time() < end) {
    nw_live_source_begin_frame(src, (guint64)display_frames++, 5000);
    g_usleep(10000);
  }
  NwLiveStats st;
  nw_live_source_stats(src, &st);
  const guint64 made = nw_job_get_live_frames(job);
  const int iterations = nw_job_get_iteration(job);
  nw_live_source_set_job(src, NULL);
  nw_job_cancel(job);
  nw_job_wait(job, NULL);
  nw_job_free(job);
  nw_live_source_free(src);
  g_test_message("%d iterations, %" G_GUINT64_FORMAT " frames made, %d taken (%d^3), "
                 "%.2f ms from asking to a host frame",
                 iterations, made, taken.taken, taken.nx, st.arrival_ms);
  g_assert_cmpuint(made, <=, (guint64)display_frames + 1);
  g_assert_cmpint(taken.taken, >=, 20); /* ...and the frames reach the host */
  g_assert_cmpint(taken.nx, ==, 32);
  g_assert_cmpint(st.reduce, ==, 2);
  g_assert_cmpuint(st.host_bytes, ==, st.arrived * (guint64)32 * 32 * 32 * 4 * sizeof(float));
  /* one frame per iteration at most (under compute-sanitizer every slow iteration makes one) */
  g_assert_cmpuint(made, <=, (guint64)iterations + 1);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  if (!nw_test_have_cuda())
    return NW_TEST_SKIP;
  g_test_add_func("/cuda/live/download-parity", test_download_parity);
  g_test_add_func("/cuda/live/download-into-recycled", test_download_into_recycled);
  g_test_add_func("/cuda/live/source-host-frames", test_source_host_frames);
  return g_test_run();
}
