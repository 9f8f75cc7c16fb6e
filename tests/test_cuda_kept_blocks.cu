/* test_cuda_kept_blocks.cu — the pinned host blocks and device blocks kept from one job to
 * the next (cuda/kept_blocks_cuda.cuh): a block given back is the one the next request of its
 * size class and flags on the device gets; another class or other flags get blocks of their
 * own; a mapped block has its device view; more blocks given back than are kept are freed;
 * device blocks beyond NW_CUDA_KEPT_MB (1 here) free the ones given back longest ago, a block
 * larger than that is freed at once, and nw_device_kept_release frees them all. Skips (77)
 * without a CUDA device. Main thread. */
#include <cuda_runtime.h>

#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kept_blocks_cuda.cuh"

static void *take(size_t bytes, unsigned int flags)
{
  void *p = nullptr;
  g_assert_cmpint(nw_pinned_take(&p, bytes, flags), ==, cudaSuccess);
  g_assert_nonnull(p);
  memset(p, 0xab, bytes); /* the whole request is there */
  return p;
}

static void test_reuse(void)
{
  void *a = take(100, cudaHostAllocMapped);
  double *dev = nullptr;
  g_assert_cmpint(cudaHostGetDevicePointer((void **)&dev, a, 0), ==, cudaSuccess);
  g_assert_nonnull(dev);
  nw_pinned_give(a, 100, cudaHostAllocMapped);
  /* 4000 bytes: the same class (4 KiB), the same flags: the block given back */
  void *b = take(4000, cudaHostAllocMapped);
  g_assert_true(b == a);
  /* 5000 bytes (8 KiB) and other flags: blocks of their own */
  void *c = take(5000, cudaHostAllocMapped);
  void *d = take(100, cudaHostAllocDefault);
  g_assert_true(c != b && d != b && d != c);
  nw_pinned_give(b, 4000, cudaHostAllocMapped);
  nw_pinned_give(c, 5000, cudaHostAllocMapped);
  nw_pinned_give(d, 100, cudaHostAllocDefault);
  void *c2 = take(8192, cudaHostAllocMapped);
  g_assert_true(c2 == c);
  nw_pinned_give(c2, 8192, cudaHostAllocMapped);
  nw_pinned_give(nullptr, 100, cudaHostAllocMapped); /* nothing */
}

/* More blocks back than are kept: the rest are freed, and every one taken again works. */
static void test_many(void)
{
  enum { N = 40 };
  void *p[N];
  for (int i = 0; i < N; i++)
    p[i] = take(64 * 1024, cudaHostAllocDefault);
  for (int i = 0; i < N; i++)
    nw_pinned_give(p[i], 64 * 1024, cudaHostAllocDefault);
  for (int i = 0; i < N; i++)
    p[i] = take(64 * 1024, cudaHostAllocDefault);
  for (int i = 0; i < N; i++)
    for (int j = i + 1; j < N; j++)
      g_assert_true(p[i] != p[j]);
  for (int i = 0; i < N; i++)
    nw_pinned_give(p[i], 64 * 1024, cudaHostAllocDefault);
}

static void *take_device(size_t bytes)
{
  void *p = nullptr;
  g_assert_cmpint(nw_device_take(&p, bytes), ==, cudaSuccess);
  g_assert_nonnull(p);
  g_assert_cmpint(cudaMemset(p, 0x5a, bytes), ==, cudaSuccess); /* the whole request is there */
  return p;
}

/* Whether p is (still) device memory that the runtime knows: a freed block is not. */
static bool is_device(const void *p)
{
  cudaPointerAttributes a;
  const cudaError_t e = cudaPointerGetAttributes(&a, p);
  cudaGetLastError(); /* an unknown pointer may be an error: not sticky */
  return e == cudaSuccess && a.type == cudaMemoryTypeDevice;
}

static void test_device_reuse(void)
{
  nw_device_kept_release();
  void *a = take_device(100);
  nw_device_give(a);
  g_assert_true(is_device(a)); /* kept, not freed */
  void *b = take_device(4000); /* the same class: the block given back */
  g_assert_true(b == a);
  void *c = take_device(5000); /* 8 KiB: a block of its own */
  g_assert_true(c != b);
  nw_device_give(b);
  nw_device_give(c);
  void *c2 = take_device(8192);
  g_assert_true(c2 == c);
  nw_device_give(c2);
  nw_device_give(nullptr); /* nothing */
  nw_device_kept_release();
  g_assert_false(is_device(a));
  g_assert_false(is_device(c));
}

/* NW_CUDA_KEPT_MB=1: 768 KiB blocks, one kept at a time; the oldest goes first. */
static void test_device_cap(void)
{
  nw_device_kept_release();
  const size_t kib = 1024;
  void *a = take_device(768 * kib), *b = take_device(768 * kib);
  nw_device_give(a);
  nw_device_give(b); /* a and b would be 1.5 MiB: a, the older, is freed */
  g_assert_false(is_device(a));
  g_assert_true(is_device(b));
  void *big = take_device(2048 * kib); /* above the cap: freed when given back */
  nw_device_give(big);
  g_assert_false(is_device(big));
  g_assert_true(is_device(b));
  void *b2 = take_device(700 * kib); /* the class of 700 KiB is not 768's: a new block */
  g_assert_true(b2 != b);
  nw_device_give(b2); /* b, older, makes room */
  g_assert_false(is_device(b));
  g_assert_true(is_device(b2));
  nw_device_kept_release();
  g_assert_false(is_device(b2));
}

int main(int argc, char **argv)
{
  g_setenv("NW_CUDA_KEPT_MB", "1", TRUE); /* read once, at the first device block kept */
  g_test_init(&argc, &argv, nullptr);
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    g_printerr("no CUDA device: skipped\n");
    return 77;
  }
  g_test_add_func("/cuda/kept-blocks/pinned-reuse", test_reuse);
  g_test_add_func("/cuda/kept-blocks/pinned-many", test_many);
  g_test_add_func("/cuda/kept-blocks/device-reuse", test_device_reuse);
  g_test_add_func("/cuda/kept-blocks/device-cap", test_device_cap);
  return g_test_run();
}
