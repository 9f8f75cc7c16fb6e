/* nw_cuda.h — the C face of the CUDA back end: device discovery and the registration of the
 * CUDA method implementations. Everything CUDA C++ stays in the .cu files behind extern "C"
 * functions with the nw_ prefix. Call from the main thread at start-up (registration), any
 * thread otherwise. */
#ifndef NW_CUDA_H
#define NW_CUDA_H

#include <glib.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Number of usable CUDA devices; 0 when there is no device or no driver (never an error). */
int nw_cuda_device_count(void);
/* This process's device: local rank modulo the device count under mpirun, else 0. */
int nw_cuda_rank_device(void);
/* Name of device 0, or a short reason when none: "NVIDIA H100 80GB HBM3" /
 * "cudaGetDeviceCount: no CUDA-capable device is detected" (callers wrap the reason as
 * "no CUDA device (...)"). TRUE when a device is usable: it exists and can run this build's
 * kernels. The answer is computed once per process. */
gboolean nw_cuda_probe(char *name, size_t name_len);
/* Free and total device memory in bytes of the current device. */
gboolean nw_cuda_mem_info(size_t *free_bytes, size_t *total_bytes);

/* Register every CUDA method with core's registry, and the probe. */
void nw_cuda_register_methods(void);

#ifdef __cplusplus
}
#endif

#endif
