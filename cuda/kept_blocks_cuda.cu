/* kept_blocks_cuda.cu — see kept_blocks_cuda.cuh. */
#include "kept_blocks_cuda.cuh"

#include <glib.h>
#include <stdint.h>
#include <stdlib.h>

namespace {

constexpr int kMaxKept = 32;                             /* blocks kept in all */
constexpr size_t kMaxPinnedBytes = (size_t)64 << 20;     /* pinned blocks kept a device */
constexpr size_t kDefaultDeviceBytes = (size_t)256 << 20; /* device blocks kept a device */
constexpr unsigned int kDeviceMemory = ~0u; /* Kept::flags of a device block */

struct Kept {
  void *p; /* NULL: a free slot */
  size_t size;
  unsigned int flags; /* cudaHostAlloc's, or kDeviceMemory */
  int device;
  guint64 given; /* when it came back: the oldest goes first */
};

GMutex lock;
Kept kept[kMaxKept];
guint64 gifts;
gboolean hooked;
/* Device blocks handed out (the lock held): pointer -> its size class plus its device (a
 * class is whole pages, so the device fits in the low bits). */
GHashTable *taken;
constexpr size_t kDeviceBits = 4095;

/* The size class of a request: its whole 4 KiB pages (at least one). */
size_t size_class(size_t bytes)
{
  const size_t page = 4096;
  return bytes <= page ? page : (bytes + page - 1) / page * page;
}

size_t device_cap(void)
{
  static gsize cap;
  if (g_once_init_enter(&cap)) {
    const char *env = g_getenv("NW_CUDA_KEPT_MB");
    gsize v = kDefaultDeviceBytes;
    if (env != nullptr) {
      char *end = nullptr;
      const guint64 mb = g_ascii_strtoull(env, &end, 10);
      if (end != env && *end == '\0' && mb <= ((guint64)1 << 20))
        v = (gsize)(mb << 20);
    }
    g_once_init_leave(&cap, v + 1); /* + 1: 0 MiB is a valid cap, 0 is not a valid once */
  }
  return cap - 1;
}

size_t cap_of(unsigned int flags)
{
  return flags == kDeviceMemory ? device_cap() : kMaxPinnedBytes;
}

/* k holds a block of device's that counts against the cap of flags' kind (pinned or device). */
bool counts_with(const Kept &k, int device, unsigned int flags)
{
  return k.p != nullptr && k.device == device &&
         (k.flags == kDeviceMemory) == (flags == kDeviceMemory);
}

/* Bytes kept for a device of the kind of flags (the lock held). */
size_t kept_bytes(int device, unsigned int flags)
{
  size_t sum = 0;
  for (const Kept &k : kept)
    if (counts_with(k, device, flags))
      sum += k.size;
  return sum;
}

/* Frees a kept block on its own device (the lock held; the slot made free). */
void free_block(Kept &k)
{
  int current = -1;
  const gboolean switch_device = cudaGetDevice(&current) == cudaSuccess && current != k.device;
  if (switch_device && cudaSetDevice(k.device) != cudaSuccess) {
    k.p = nullptr; /* that device is gone: nothing left to free */
    return;
  }
  if (k.flags == kDeviceMemory)
    cudaFree(k.p);
  else
    cudaFreeHost(k.p);
  if (switch_device)
    cudaSetDevice(current);
  k.p = nullptr;
}

/* At exit: every kept block freed on its device. */
void free_kept(void)
{
  g_mutex_lock(&lock);
  for (Kept &k : kept)
    if (k.p != nullptr)
      free_block(k);
  g_mutex_unlock(&lock);
}

/* The kept block of the class, flags and device, taken out of the slots; NULL if none. */
void *take_kept(size_t size, unsigned int flags, int device)
{
  void *p = nullptr;
  g_mutex_lock(&lock);
  for (Kept &k : kept)
    if (k.p != nullptr && k.size == size && k.flags == flags && k.device == device) {
      p = k.p;
      k.p = nullptr;
      break;
    }
  g_mutex_unlock(&lock);
  return p;
}

/* Keeps p (the lock held): room made under the kind's cap by freeing the blocks given back
 * longest ago, and a slot by freeing the oldest of all. FALSE: larger than the cap. */
gboolean keep(void *p, size_t size, unsigned int flags, int device)
{
  const size_t cap = cap_of(flags);
  if (size > cap)
    return FALSE;
  while (kept_bytes(device, flags) + size > cap) {
    Kept *oldest = nullptr;
    for (Kept &k : kept)
      if (counts_with(k, device, flags) && (oldest == nullptr || k.given < oldest->given))
        oldest = &k;
    free_block(*oldest); /* not NULL: the kind keeps more than 0 bytes here */
  }
  Kept *slot = nullptr;
  for (Kept &k : kept)
    if (k.p == nullptr) {
      slot = &k;
      break;
    }
  if (slot == nullptr) { /* every slot holds a block: the one given back longest ago goes */
    slot = &kept[0];
    for (Kept &k : kept)
      if (k.given < slot->given)
        slot = &k;
    free_block(*slot);
  }
  *slot = {p, size, flags, device, ++gifts};
  if (!hooked)
    hooked = atexit(free_kept) == 0;
  return TRUE;
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
  if ((*p = take_kept(size, flags, device)) != nullptr)
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
    g_mutex_lock(&lock);
    kept_it = keep(p, size_class(bytes), flags, device);
    g_mutex_unlock(&lock);
  }
  if (!kept_it)
    cudaFreeHost(p);
}

cudaError_t nw_device_take(void **p, size_t bytes)
{
  *p = nullptr;
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess)
    return e;
  const size_t size = size_class(bytes);
  if ((*p = take_kept(size, kDeviceMemory, device)) == nullptr) {
    e = cudaMalloc(p, size);
    if (e != cudaSuccess) {
      *p = nullptr;
      return e;
    }
  }
  g_mutex_lock(&lock);
  if (taken == nullptr)
    taken = g_hash_table_new(g_direct_hash, g_direct_equal);
  g_hash_table_insert(taken, *p, GSIZE_TO_POINTER(size | (size_t)(device & (int)kDeviceBits)));
  g_mutex_unlock(&lock);
  return cudaSuccess;
}

void nw_device_give(void *p)
{
  if (p == nullptr)
    return;
  gboolean kept_it = FALSE;
  g_mutex_lock(&lock);
  const size_t entry = taken != nullptr ? GPOINTER_TO_SIZE(g_hash_table_lookup(taken, p)) : 0;
  if (entry != 0) {
    g_hash_table_remove(taken, p);
    kept_it = keep(p, entry & ~kDeviceBits, kDeviceMemory, (int)(entry & kDeviceBits));
  }
  g_mutex_unlock(&lock);
  if (!kept_it)
    cudaFree(p);
}

void nw_device_kept_release(void)
{
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess)
    return;
  g_mutex_lock(&lock);
  for (Kept &k : kept)
    if (k.p != nullptr && k.flags == kDeviceMemory && k.device == device)
      free_block(k);
  g_mutex_unlock(&lock);
}
