/* cuda_validate.h — llm.c's validate_result for neurowarp: compare what a CUDA kernel wrote
 * with what its CPU twin computed, element by element, with a stated tolerance; used by the
 * kernel parity tests (tests/test_cuda_*_kernels.cu) and the kernel variants of bench/.
 * Host code, any thread, CUDA runtime C API only.
 *
 *   NW_TEST_CUDA(nw_poison(d_out, n * sizeof(float4)));   // unwritten elements become NaN
 *   NW_TEST_CUDA(nw_warp_cuda(d_out, ...));
 *   g_assert_cmpint(nw_validate_result("warp", d_out, 1, cpu->data, 1, 1, n, tol), ==, 0);
 *
 * A float passes when |gpu - cpu| <= abs + rel * |cpu|. NaN is handled explicitly: a NaN in
 * the CPU result must be NaN on the GPU too, and a NaN (or Inf) on the GPU where the CPU is
 * finite fails — so an element the kernel never wrote (still poisoned) always fails. */
#ifndef NW_CUDA_VALIDATE_H
#define NW_CUDA_VALIDATE_H

#include <cuda_runtime.h>
#include <glib.h>
#include <stddef.h>

#include "volume.h"

G_BEGIN_DECLS

typedef struct {
  double abs, rel;
} NwTolerance;

/* Aborts the test (g_error) with file, line, call and CUDA's reason unless call returns
 * cudaSuccess. */
#define NW_TEST_CUDA(call) nw_test_cuda_ok((call), #call, __FILE__, __LINE__)
void nw_test_cuda_ok(cudaError_t status, const char *call, const char *file, int line);

/* Fills bytes at device pointer d with 0xFF: every float becomes NaN. */
cudaError_t nw_poison(void *d, size_t bytes);

/* Compares n elements on the host: element e has its nc compared floats at gpu[e * gpu_stride
 * + c] and cpu[e * cpu_stride + c] (c < nc), e.g. a float4 field against an nc = 3 volume:
 * strides 4 and 3, nc 3. Prints one line "name: ... max |diff| ... (tolerance ...)" and up to
 * five mismatches with their element, component and both values. Returns the number of
 * mismatching floats. Reports go to stderr (a benchmark's stdout carries its JSON). */
size_t nw_validate_floats(const char *name, const float *gpu, int gpu_stride, const float *cpu,
                          int cpu_stride, int nc, size_t n, NwTolerance tol);
/* The same for a kernel's output at device pointer d_out ((n - 1) * gpu_stride + nc floats
 * are copied; a failed copy aborts the test). d_out may point at a component of an
 * interleaved buffer. */
size_t nw_validate_result(const char *name, const float *d_out, int gpu_stride, const float *cpu,
                          int cpu_stride, int nc, size_t n, NwTolerance tol);
/* One value (a reduction); TRUE when it passes, with the same rule and a printed line. */
gboolean nw_validate_value(const char *name, double gpu, double cpu, NwTolerance tol);

/* ---- inputs for the kernel tests (abort the test on any CUDA error) ---------------------- */

/* A device copy of n floats; free with cudaFree. */
float *nw_test_device_floats(const float *h, size_t n);
/* A device float4 field (x, y, z, w = 0) from an nc = 3 volume; free with cudaFree. */
void *nw_test_device_field(const NwVolume *v);
/* A device buffer of `bytes` bytes, poisoned (NaN); free with cudaFree. */
void *nw_test_device_poisoned(size_t bytes);
/* Uniform random values in [lo, hi], never 0; with quantum > 0 rounded to multiples of it
 * (exact sums with small integers, e.g. displacements of 1/256 voxel). Deterministic. */
NwVolume *nw_test_random_volume(int nx, int ny, int nz, int nc, double lo, double hi,
                                double quantum, guint32 seed);

G_END_DECLS

#endif
