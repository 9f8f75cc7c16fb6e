/* demo_appearance.c — what the demo case's moving image looks like besides its deformation
 * (demo_private.h): contrast change, multiplicative bias, Gaussian or Rician noise. Any
 * thread; one GRand stream, so the bytes depend on the seed only. */
#include <math.h>

#include "demo.h"
#include "demo_private.h"

static int compare_float(const void *a, const void *b)
{
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* The 99th percentile of the positive voxels (every 7th voxel is enough), as the scale of the
 * noise: robust to a few bright outliers. */
static double robust_max(const NwVolume *v)
{
  size_t n = nw_volume_n_voxels(v);
  g_autoptr(GArray) s = g_array_new(FALSE, FALSE, sizeof(float));
  for (size_t e = 0; e < n; e += 7)
    if (v->data[e] > 0.0f)
      g_array_append_val(s, v->data[e]);
  if (s->len == 0)
    return 1.0;
  g_array_sort(s, compare_float);
  return g_array_index(s, float, (guint)(0.99 * (s->len - 1)));
}

/* The bias shape b(x) with |b| <= 1 on the grid's box ([-1, 1] per axis): by default a tilt
 * along x and a bowl along y; drawn: a random mix of the three tilts and three bowls, its
 * coefficients scaled so that their magnitudes sum to 1. */
typedef struct {
  double c[6]; /* x, y, z, 1 - 2x², 1 - 2y², 1 - 2z² */
} BiasShape;

static BiasShape bias_shape(const NwDemoOptions *o)
{
  BiasShape b = {{0.6, 0.0, 0.0, 0.0, 0.4, 0.0}};
  if (!o->bias_drawn)
    return b;
  g_autoptr(GRand) r = g_rand_new_with_seed(o->seed * 40503u + 0x27d4eb2fu);
  double sum = 0.0;
  for (int q = 0; q < 6; q++)
    sum += fabs(b.c[q] = g_rand_double_range(r, -1.0, 1.0));
  for (int q = 0; q < 6; q++)
    b.c[q] /= MAX(sum, 1e-12);
  return b;
}

static double centred(int i, int n)
{
  return n > 1 ? 2.0 * i / (n - 1) - 1.0 : 0.0;
}

/* Contrast (gamma about the robust maximum), multiplicative bias 1 + amp * b(x), then noise
 * (Box–Muller on GRand: one sequential stream, so the bytes depend on the seed only):
 * Gaussian added, or Rician (the magnitude with Gaussian noise in the real and imaginary
 * parts). The default options give the bytes of the original demo. */
void nw_demo_bias_and_noise(NwVolume *v, const NwDemoOptions *o)
{
  const double top = robust_max(v), sd = o->noise_sigma * top;
  const BiasShape b = bias_shape(o);
  g_autoptr(GRand) r = g_rand_new_with_seed(o->seed * 2654435761u + 17u);
  for (int k = 0; k < v->nz; k++) {
    const double z = centred(k, v->nz);
    for (int j = 0; j < v->ny; j++) {
      const double y = centred(j, v->ny);
      for (int i = 0; i < v->nx; i++) {
        const double x = centred(i, v->nx);
        const double shape = b.c[0] * x + b.c[1] * y + b.c[2] * z + b.c[3] * (1.0 - 2.0 * x * x) +
                             b.c[4] * (1.0 - 2.0 * y * y) + b.c[5] * (1.0 - 2.0 * z * z);
        const double bias = 1.0 + o->bias_amplitude * shape;
        float *p = &v->data[nw_volume_index(v, i, j, k)];
        double s = *p;
        if (o->gamma != 1.0 && s > 0.0)
          s = top * pow(s / top, o->gamma);
        double u1 = g_rand_double_range(r, 1e-12, 1.0), u2 = g_rand_double(r);
        const double radius = sd * sqrt(-2.0 * log(u1));
        if (o->rician)
          *p =
              (float)hypot(s * bias + radius * cos(2.0 * G_PI * u2), radius * sin(2.0 * G_PI * u2));
        else
          *p = (float)(s * bias + radius * cos(2.0 * G_PI * u2));
      }
    }
  }
}
