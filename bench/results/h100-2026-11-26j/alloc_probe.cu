// What a cost's creation and freeing pay per call on this host: CUDA allocations of the
// sizes affine_cost_cuda.cu makes, pinned small blocks, streams, occupancy queries.
#include <cuda_runtime.h>
#include <stdio.h>
#include <time.h>
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
__global__ void k(float *p) { if (p) p[threadIdx.x] = 1.0f; }
#define T(name, ...) { double best = 1e9, sum = 0; for (int r = 0; r < 10; r++) { double t0 = now(); __VA_ARGS__; double t = now() - t0; sum += t; if (t < best) best = t; } printf("%-44s min %.3f mean %.3f ms\n", name, best, sum / 10); }
int main() {
  cudaFree(0);
  void *p; float *d; cudaStream_t s;
  T("cudaStreamCreate+Destroy", { cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); cudaStreamDestroy(s); });
  T("cudaMalloc+Free 8 KB", { cudaMalloc(&p, 8192); cudaFree(p); });
  T("cudaMalloc+Free 37.7 MB", { cudaMalloc(&p, 37748736); cudaFree(p); });
  T("cudaMalloc+Free 100 MB", { cudaMalloc(&p, 100663296); cudaFree(p); });
  T("cudaMalloc 37.7 MB", { cudaMalloc(&p, 37748736); }); 
  T("cudaHostAlloc mapped 1 KB + FreeHost", { cudaHostAlloc(&p, 1024, cudaHostAllocMapped); cudaFreeHost(p); });
  T("cudaHostAlloc mapped 1 KB", { cudaHostAlloc(&p, 1024, cudaHostAllocMapped); });
  T("cudaFreeHost 1 KB", { cudaHostAlloc(&p, 1024, cudaHostAllocMapped); double t = now(); cudaFreeHost(p); (void)t; });
  T("cudaHostAlloc 4.6 KB default + FreeHost", { cudaHostAlloc(&p, 4608, cudaHostAllocDefault); cudaFreeHost(p); });
  int b; T("occupancy query x7", { for (int i = 0; i < 7; i++) cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, k, 256, 0); });
  cudaChannelFormatDesc f = cudaCreateChannelDesc(16, 0, 0, 0, cudaChannelFormatKindUnsigned); cudaArray_t a;
  T("cudaMalloc3DArray 3072x3072x1 u16 + Free", { cudaMalloc3DArray(&a, &f, make_cudaExtent(3072, 3072, 1), cudaArrayLayered); cudaFreeArray(a); });
  cudaMalloc(&d, 4096);
  T("launch + sync", { k<<<1, 32>>>(d); cudaDeviceSynchronize(); });
  T("memsetAsync + stream sync", { cudaMemsetAsync(d, 0, 4, 0); cudaStreamSynchronize(0); });
  return 0;
}
