/* test_cuda_pinned_kept.cu — the pinned blocks kept from one job to the next
 * (cuda/pinned_kept_cuda.cuh): a block given back is the one the next request of its size
 * class and flags on the device gets; another class or other flags get blocks of their own;
 * a mapped block has its device view; more blocks given back than are kept are freed. Skips
 * (77) without a CUDA device. Main thread. */
#include <cuda_runtime.h>

#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pinned_kept_cuda.cuh"

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

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, nullptr);
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    g_printerr("no CUDA device: skipped\n");
    return 77;
  }
  g_test_add_func("/cuda/pinned-kept/reuse", test_reuse);
  g_test_add_func("/cuda/pinned-kept/many", test_many);
  return g_test_run();
}
