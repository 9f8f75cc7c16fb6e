/* cuda_device.cu — CUDA device discovery (count, probe, memory) and the registration of the
 * CUDA methods with core's registry. CUDA back end. Registration runs once on the main
 * thread at start-up; the probe may run on any thread (its answer is computed once). */
#include "affine_demons_method.h"
#include "affine_method.h"
#include "demons_method.h"
#include "fluid_method.h"
#include "nlm_surface_method.h"
#include "nw_cuda.h"

#include <cuda_runtime.h>

#include "cuda_check.h"
#include "method.h"
#include "smooth_method.h"

/* A kernel that does nothing: asking for its attributes proves that this binary carries
 * code the device can run (sm_90 machine code or PTX the driver can compile). */
__global__ void nw_probe_kernel(void) {}

extern "C" int nw_cuda_device_count(void)
{
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError(); /* clear it: no device is an answer, not a failure */
    return 0;
  }
  return n;
}

/* The probe's answer, computed on first use: the device name, or the bare reason there is
 * none (the registry and the tests wrap it as "no CUDA device (<reason>)"). */
static gboolean probe_ok;
static char probe_text[256];

static void probe_once(void)
{
  int n = 0;
  cudaError_t status = cudaGetDeviceCount(&n);
  if (status != cudaSuccess) {
    g_snprintf(probe_text, sizeof probe_text, "cudaGetDeviceCount: %s", cudaGetErrorString(status));
    cudaGetLastError();
    return;
  }
  if (n == 0) {
    g_strlcpy(probe_text, "cudaGetDeviceCount found no device", sizeof probe_text);
    return;
  }
  cudaDeviceProp prop;
  status = cudaGetDeviceProperties(&prop, 0);
  if (status == cudaSuccess) {
    cudaFuncAttributes attr;
    status = cudaFuncGetAttributes(&attr, nw_probe_kernel);
  }
  if (status != cudaSuccess) {
    g_snprintf(probe_text, sizeof probe_text, "device 0 cannot run this build's kernels: %s",
               cudaGetErrorString(status));
    cudaGetLastError();
    return;
  }
  g_strlcpy(probe_text, prop.name, sizeof probe_text);
  probe_ok = TRUE;
}

extern "C" gboolean nw_cuda_probe(char *name, size_t name_len)
{
  static gsize done = 0;
  if (g_once_init_enter(&done)) {
    probe_once();
    g_once_init_leave(&done, 1);
  }
  if (name != NULL && name_len > 0)
    g_strlcpy(name, probe_text, name_len);
  return probe_ok;
}

extern "C" gboolean nw_cuda_mem_info(size_t *free_bytes, size_t *total_bytes)
{
  size_t f = 0, t = 0;
  if (cudaMemGetInfo(&f, &t) != cudaSuccess) {
    cudaGetLastError();
    return FALSE;
  }
  if (free_bytes != NULL)
    *free_bytes = f;
  if (total_bytes != NULL)
    *total_bytes = t;
  return TRUE;
}

/* The device of this process: under mpirun (Open MPI, MPICH, Slurm, PMIx name the local
 * rank) local rank modulo the device count, so that one rank per GPU is what mpirun -n GPUS
 * gives; else device 0. Computed once. */
extern "C" int nw_cuda_rank_device(void)
{
  static gsize done = 0;
  static int device = 0;
  if (g_once_init_enter(&done)) {
    const char *names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID",
                           "PMIX_LOCAL_RANK"};
    int local = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
      const char *v = g_getenv(names[i]);
      if (v != NULL) {
        local = atoi(v);
        break;
      }
    }
    const int count = nw_cuda_device_count();
    device = count > 0 && local > 0 ? local % count : 0;
    g_once_init_leave(&done, 1);
  }
  return device;
}

static void bind_thread(void)
{
  const int d = nw_cuda_rank_device();
  if (d != 0 && cudaSetDevice(d) != cudaSuccess)
    cudaGetLastError(); /* the job's first allocation reports the device's trouble */
}

extern "C" void nw_cuda_register_methods(void)
{
  nw_method_register(&nw_smooth_cuda_ops);
  nw_method_register(&nw_demons_cuda_ops);
  nw_method_register(&nw_fluid_cuda_ops);
  nw_method_register(&nw_affine_cuda_ops);
  nw_method_register(&nw_affine_demons_cuda_ops);
  nw_method_register(&nw_nlm_surface_cuda_ops);
  static const NwCudaProbe probe = {
      .available = nw_cuda_probe, .mem_info = nw_cuda_mem_info, .bind_thread = bind_thread};
  nw_method_set_cuda_probe(&probe);
}
