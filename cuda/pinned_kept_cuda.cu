/* pinned_kept_cuda.cu — see pinned_kept_cuda.cuh. */
#include "pinned_kept_cuda.cuh"

#include <glib.h>
#include <stdlib.h>

namespace {

constexpr int kMaxKept = 16;                     /* blocks kept in all */
constexpr size_t kMaxKeptBytes = (size_t)64 << 20; /* kept a device */

struct Kept {
  void *p; /* NULL: a free slot */
  size_t size;
  unsigned int flags;
  int device;
};

GMutex lock;
Kept kept[kMaxKept];
gboolean hooked;

/* The size class of a request: its whole 4 KiB pages (at least one). */
size_t size_class(size_t bytes)
{
  const size_t page = 4096;
  return bytes <= page ? page : (bytes + page - 1) / page * page;
}

/* Bytes kept for a device (the lock held). */
size_t kept_bytes(int device)
{
  size_t sum = 0;
  for (const Kept &k : kept)
    if (k.p != nullptr && k.device == device)
      sum += k.size;
  return sum;
}

/* At exit: every kept block freed on its device. */
void free_kept(void)
{
  g_mutex_lock(&lock);
  int current = 0;
  const gboolean have = cudaGetDevice(&current) == cudaSuccess;
  for (Kept &k : kept)
    if (k.p != nullptr && cudaSetDevice(k.device) == cudaSuccess) {
      cudaFreeHost(k.p);
      k.p = nullptr;
    }
  if (have)
    cudaSetDevice(current);
  g_mutex_unlock(&lock);
}

} // namespace

cudaError_t nw_pinned_take(void **p, size_t bytes, unsigned int flags)
{
  *p = nullptr;
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess)
    return e;
  const size_t size = size_class(bytes);
  g_mutex_lock(&lock);
  for (Kept &k : kept)
    if (k.p != nullptr && k.size == size && k.flags == flags && k.device == device) {
      *p = k.p;
      k.p = nullptr;
      break;
    }
  g_mutex_unlock(&lock);
  if (*p != nullptr)
    return cudaSuccess;
  e = cudaHostAlloc(p, size, flags);
  if (e != cudaSuccess)
    *p = nullptr;
  return e;
}

void nw_pinned_give(void *p, size_t bytes, unsigned int flags)
{
  if (p == nullptr)
    return;
  int device = 0;
  gboolean kept_it = FALSE;
  if (cudaGetDevice(&device) == cudaSuccess) {
    const size_t size = size_class(bytes);
    g_mutex_lock(&lock);
    if (kept_bytes(device) + size <= kMaxKeptBytes)
      for (Kept &k : kept)
        if (k.p == nullptr) {
          k = {p, size, flags, device};
          kept_it = TRUE;
          break;
        }
    if (kept_it && !hooked)
      hooked = atexit(free_kept) == 0;
    g_mutex_unlock(&lock);
  }
  if (!kept_it)
    cudaFreeHost(p);
}
