/* demo_deform.c — the demo case's synthetic deformations (demo_private.h): sums of
 * Gaussian-windowed plane waves, and the inverse of a displacement by fixed-point iteration.
 * Any thread; OpenMP over slices. */
#include <math.h>
#include <string.h>

#include "demo.h"
#include "demo_private.h"
#include "field.h"

/* One term: Gaussian window times a plane wave sin(k·x + phase), both in voxel units,
 * evaluated separably: per axis a complex factor w_a(x_a) e^{i k_a x_a}, and the term is the
 * imaginary part of their product times e^{i phase}. */
typedef struct {
  double amp[3];      /* per component */
  double k[3], phase; /* wave vector (rad/voxel), phase */
  double centre[3], width[3];
} WaveTerm;

static void draw_term(WaveTerm *t, GRand *r, const int n[3], const double wavelength[2])
{
  double dir[3], norm = 0.0;
  for (int a = 0; a < 3; a++) {
    dir[a] = n[a] > 1 ? g_rand_double_range(r, -1.0, 1.0) : 0.0;
    norm += dir[a] * dir[a];
  }
  norm = sqrt(MAX(norm, 1e-12));
  int n_min = G_MAXINT;
  for (int a = 0; a < 3; a++)
    if (n[a] > 1)
      n_min = MIN(n_min, n[a]);
  /* By default 0.7..1.1 of the smallest extent: one or two smooth bumps across the head. */
  double wl = g_rand_double_range(r, wavelength[0], wavelength[1]) * n_min;
  for (int a = 0; a < 3; a++) {
    t->k[a] = 2.0 * G_PI / wl * dir[a] / norm;
    t->amp[a] = n[a] > 1 ? g_rand_double_range(r, -1.0, 1.0) : 0.0;
    t->centre[a] = (n[a] - 1) * g_rand_double_range(r, 0.4, 0.6);
    t->width[a] = MAX(1.0, 0.35 * n[a]);
  }
  t->phase = g_rand_double_range(r, 0.0, 2.0 * G_PI);
}

/* factors[a][x] = w_a(x) e^{i k_a x} as (re, im) pairs. */
static void term_factors(const WaveTerm *t, const int n[3], double *factors[3])
{
  for (int a = 0; a < 3; a++) {
    for (int x = 0; x < n[a]; x++) {
      double d = (x - t->centre[a]) / t->width[a];
      double w = n[a] > 1 ? exp(-0.5 * d * d) : 1.0;
      double ph = t->k[a] * x + (a == 2 ? t->phase : 0.0);
      factors[a][2 * x] = w * cos(ph);
      factors[a][2 * x + 1] = w * sin(ph);
    }
  }
}

static void add_term(NwVolume *u, const WaveTerm *t, double *factors[3])
{
#pragma omp parallel for schedule(static)
  for (int k = 0; k < u->nz; k++) {
    for (int j = 0; j < u->ny; j++) {
      const double *fy = &factors[1][2 * j], *fz = &factors[2][2 * k];
      double yz_re = fy[0] * fz[0] - fy[1] * fz[1], yz_im = fy[0] * fz[1] + fy[1] * fz[0];
      for (int i = 0; i < u->nx; i++) {
        const double *fx = &factors[0][2 * i];
        double s = fx[0] * yz_im + fx[1] * yz_re; /* Im of the product */
        float *p = &u->data[nw_volume_index(u, i, j, k) * 3];
        for (int c = 0; c < 3; c++)
          p[c] += (float)(t->amp[c] * s);
      }
    }
  }
}

void nw_demo_wave_field(NwVolume *u, double max_disp_vox, guint32 seed, int n_terms,
                        const double wavelength[2])
{
  const int n[3] = {u->nx, u->ny, u->nz};
  memset(u->data, 0, nw_volume_n_floats(u) * sizeof(float));
  g_autoptr(GRand) r = g_rand_new_with_seed(seed ^ 0x9e3779b9u);
  double *factors[3];
  for (int a = 0; a < 3; a++)
    factors[a] = g_new(double, 2 * (size_t)n[a]);
  for (int t = 0; t < n_terms; t++) {
    WaveTerm term;
    draw_term(&term, r, n, wavelength);
    term_factors(&term, n, factors);
    add_term(u, &term, factors);
  }
  for (int a = 0; a < 3; a++)
    g_free(factors[a]);
  double peak = nw_field_max_norm(u);
  if (peak > 0.0) {
    float scale = (float)(max_disp_vox / peak);
    size_t nf = nw_volume_n_floats(u);
    for (size_t e = 0; e < nf; e++)
      u->data[e] *= scale;
  }
}

void nw_demo_smooth_field(NwVolume *u, double max_disp_vox, guint32 seed)
{
  g_return_if_fail(u != NULL && u->nc == 3);
  const double wavelength[2] = {0.7, 1.1};
  nw_demo_wave_field(u, max_disp_vox, seed, 3, wavelength);
}

/* w with id + w = (id + u)^-1, by the fixed point w(y) = -u(y + w(y)). The error shrinks by
 * max|∇u| per round, about 0.1 for the demo fields (Jacobians within 0.9..1.1), so 8 rounds
 * leave far less than 1e-6 voxel. */
NwVolume *nw_demo_invert_field(const NwVolume *u, GError **error)
{
  g_autoptr(NwVolume) w = nw_volume_new_like(u, 3, error);
  g_autoptr(NwVolume) next = w != NULL ? nw_volume_new_like(u, 3, error) : NULL;
  if (next == NULL)
    return NULL;
  for (int round = 0; round < 8; round++) {
#pragma omp parallel for schedule(static)
    for (int k = 0; k < u->nz; k++) {
      for (int j = 0; j < u->ny; j++) {
        for (int i = 0; i < u->nx; i++) {
          size_t e = nw_volume_index(u, i, j, k) * 3;
          float s[3];
          nw_field_sample(u, i + w->data[e], j + w->data[e + 1], k + w->data[e + 2], s);
          for (int c = 0; c < 3; c++)
            next->data[e + c] = -s[c];
        }
      }
    }
    NwVolume *tmp = w;
    w = next;
    next = tmp;
  }
  return g_steal_pointer(&w);
}
