/* nlm_update_cpu.c — the weights and the explicit step of nlm-surface (nlm_kernels.h):
 * w = exp(-|x - y|^2 / c1) exp(-||phi[x] - phi[y]||^2 / c2) over each element's top-m
 * neighbours, dt = 1 / max sum w, phi_j += dt sum w (phi_l - phi_j). CPU reference; any
 * thread; OpenMP over band elements. */
#include "nlm_kernels.h"

#include <math.h>

void nw_nlm_weights_cpu(float *w, float *wsum, const int *nbr, const float *nd, const float *pos_mm,
                        int n, int m, double c1_mm2, double c2_mm2)
{
#pragma omp parallel for schedule(static)
  for (int j = 0; j < n; j++) {
    const float *x = pos_mm + (size_t)j * 3;
    double sum = 0.0;
    for (int s = 0; s < m; s++) {
      size_t js = (size_t)j * m + s;
      double spatial = 1.0;
      if (c1_mm2 > 0.0) {
        const float *y = pos_mm + (size_t)nbr[js] * 3;
        double dx = x[0] - y[0], dy = x[1] - y[1], dz = x[2] - y[2];
        spatial = exp(-(dx * dx + dy * dy + dz * dz) / c1_mm2);
      }
      w[js] = (float)(spatial * exp(-(double)nd[js] / c2_mm2));
      sum += w[js];
    }
    wsum[j] = (float)sum;
  }
}

float nw_nlm_step_size_cpu(const float *wsum, int n)
{
  float most = 0.0f;
  for (int j = 0; j < n; j++)
    most = MAX(most, wsum[j]);
  return most > 0.0f ? 1.0f / most : 0.0f;
}

void nw_nlm_update_cpu(float *out, const float *centre, const int *nbr, const float *w, int n,
                       int m, float dt)
{
#pragma omp parallel for schedule(static)
  for (int j = 0; j < n; j++) {
    double flow = 0.0;
    for (int s = 0; s < m; s++) {
      size_t js = (size_t)j * m + s;
      flow += (double)w[js] * ((double)centre[nbr[js]] - (double)centre[j]);
    }
    out[j] = (float)((double)centre[j] + dt * flow);
  }
}
