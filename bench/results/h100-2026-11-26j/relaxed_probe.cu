// How fast could a 3072² u16 affine MSE/NCC evaluation be if the CPU twin's bit-for-bit
// samples were given up? Three kernels on the same images and map, one launch an evaluation:
//  hw:     the texture unit's bilinear filter (8-bit weights), FMA positions, float sums a thread
//  gather: tld4 gathers blended with FMAs (full-precision weights), float sums a thread
//  gatherd: the same with double sums a voxel (as the project's kernel sums)
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
constexpr int N = 3072, K = 4;
__device__ double g_sums[6];
template <int MODE>
__global__ void __launch_bounds__(256, 3) cost(cudaTextureObject_t tex, const uint16_t *__restrict__ f, float4 m0, float4 m1) {
  float s[6] = {0, 0, 0, 0, 0, 0};
  double d[6] = {0, 0, 0, 0, 0, 0};
  const int groups = N / K;
  for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < N * groups; t += gridDim.x * blockDim.x) {
    const int j = t / groups, i0 = (t - j * groups) * K;
    const uint2 fc = __ldg((const uint2 *)(f + (size_t)j * N + i0));
    const float rx = fmaf(m0.y, (float)j, m0.w), ry = fmaf(m1.y, (float)j, m1.w);
    float fv[K] = {(float)(fc.x & 0xffff), (float)(fc.x >> 16), (float)(fc.y & 0xffff), (float)(fc.y >> 16)};
    float mv[K]; bool in[K];
#pragma unroll
    for (int l = 0; l < K; l++) {
      const float i = (float)(i0 + l), x = fmaf(m0.x, i, rx), y = fmaf(m1.x, i, ry);
      in[l] = x >= -0.5f && x <= N - 0.5f && y >= -0.5f && y <= N - 0.5f;
      if (MODE == 0) {
        mv[l] = tex2D<float>(tex, x + 0.5f, y + 0.5f) * 65535.0f;
      } else {
        const float fx = floorf(x), fy = floorf(y), u = x - fx, w = y - fy;
        const float4 q = tex2Dgather<float4>(tex, fx + 1.0f, fy + 1.0f, 0);
        // gather order: (x0,y1) (x1,y1) (x1,y0) (x0,y0), values normalised
        const float c0 = fmaf(u, q.z - q.w, q.w), c1 = fmaf(u, q.y - q.x, q.x);
        mv[l] = fmaf(w, c1 - c0, c0) * 65535.0f;
      }
    }
#pragma unroll
    for (int l = 0; l < K; l++) {
      const float a = in[l] ? fv[l] - 20000.0f : 0.0f, b = in[l] ? mv[l] - 20000.0f : 0.0f;
      if (MODE == 2) {
        d[0] += in[l]; d[1] += a; d[2] += b; d[3] += (double)a * a; d[4] += (double)b * b; d[5] += (double)a * b;
      } else {
        s[0] += in[l]; s[1] += a; s[2] += b; s[3] = fmaf(a, a, s[3]); s[4] = fmaf(b, b, s[4]); s[5] = fmaf(a, b, s[5]);
      }
    }
  }
  for (int q = 0; q < 6; q++) {
    double v = MODE == 2 ? d[q] : (double)s[q];
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(&g_sums[q], v);
  }
}
int main() {
  uint16_t *hf = (uint16_t *)malloc((size_t)N * N * 2), *hm = (uint16_t *)malloc((size_t)N * N * 2);
  for (int j = 0; j < N; j++) for (int i = 0; i < N; i++) {
    hf[(size_t)j * N + i] = (uint16_t)(30000 + 20000 * sinf(i * 0.01f) * cosf(j * 0.013f));
    hm[(size_t)j * N + i] = (uint16_t)(30000 + 20000 * sinf(i * 0.0101f + 0.1f) * cosf(j * 0.0131f));
  }
  uint16_t *df; cudaMalloc(&df, (size_t)N * N * 2); cudaMemcpy(df, hf, (size_t)N * N * 2, cudaMemcpyHostToDevice);
  cudaChannelFormatDesc fd = cudaCreateChannelDesc<unsigned short>(); cudaArray_t arr;
  cudaMallocArray(&arr, &fd, N, N); cudaMemcpy2DToArray(arr, 0, 0, hm, N * 2, N * 2, N, cudaMemcpyHostToDevice);
  cudaResourceDesc rd = {}; rd.resType = cudaResourceTypeArray; rd.res.array.array = arr;
  cudaTextureObject_t tl, tp;
  cudaTextureDesc td = {}; td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp; td.readMode = cudaReadModeNormalizedFloat;
  td.filterMode = cudaFilterModeLinear; cudaCreateTextureObject(&tl, &rd, &td, nullptr);
  td.filterMode = cudaFilterModePoint; cudaCreateTextureObject(&tp, &rd, &td, nullptr);
  const float a = 0.05f, c = cosf(a), s = sinf(a);
  const float4 m0 = {c, -s, 0, 80.0f}, m1 = {s, c, 0, -60.0f};
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const char *names[3] = {"hw bilinear, float sums", "gather + fma, float sums", "gather + fma, double sums"};
  for (int mode = 0; mode < 3; mode++) for (int rep = 0; rep < 2; rep++) {
    int per = 0;
    auto kern = mode == 0 ? cost<0> : mode == 1 ? cost<1> : cost<2>;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kern, 256, 0);
    const int blocks = sms * per;
    cudaTextureObject_t t = mode == 0 ? tl : tp;
    for (int w = 0; w < 10; w++) kern<<<blocks, 256>>>(t, df, m0, m1);
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    double zero[6] = {0};
    const int evals = 200;
    cudaEventRecord(e0);
    for (int e = 0; e < evals; e++) kern<<<blocks, 256>>>(t, df, m0, m1);
    cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1);
    cudaEventRecord(e0);
    for (int e = 0; e < evals; e++) { kern<<<blocks, 256>>>(t, df, m0, m1); cudaEventRecord(e1); cudaEventSynchronize(e1); }
    float ms_sync; cudaEventElapsedTime(&ms_sync, e0, e1);
    cudaMemcpyToSymbol(g_sums, zero, sizeof zero);
    kern<<<blocks, 256>>>(t, df, m0, m1);
    double h[6]; cudaMemcpyFromSymbol(h, g_sums, sizeof h);
    printf("%-28s %d blocks/SM: %.2f us/eval back to back, %.2f synchronised  n %.0f mse %.6g\n", names[mode], per, ms * 1e3 / evals, ms_sync * 1e3 / evals, h[0],
           (h[3] - 2 * h[5] + h[4]) / h[0]);
  }
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
