/* fluid_kernels_cpu.c — the "fluid" kernels on the CPU (fluid_kernels.h has the contracts and
 * the discretisation): each a per-voxel function (`*_at`) that a CUDA thread would run,
 * and a loop over the grid with OpenMP over z. Any thread. */
#include "fluid_kernels.h"

#include <float.h>
#include <math.h>

#include "field.h"
#include "ordered_sums.h"
#include "resample.h"

/* ---- per-voxel helpers ---------------------------------------------------------------- */

/* Component c of the field w (nc components) at (i, j, k), 0 outside the grid. */
static inline double field_or_zero(const NwVolume *w, int c, int i, int j, int k)
{
  if (i < 0 || j < 0 || k < 0 || i >= w->nx || j >= w->ny || k >= w->nz)
    return 0.0;
  return w->data[nw_volume_index(w, i, j, k) * w->nc + c];
}

/* ∂_a of component c of a field w at (i, j, k): (w(x + e_a) - w(x - e_a)) / 2 with w = 0
 * outside the grid; 0 along an axis of size 1. */
static inline double field_diff(const NwVolume *w, int c, int a, int i, int j, int k)
{
  const int n[3] = {w->nx, w->ny, w->nz};
  if (n[a] == 1)
    return 0.0;
  const int di = a == 0, dj = a == 1, dk = a == 2;
  return 0.5 * (field_or_zero(w, c, i + di, j + dj, k + dk) -
                field_or_zero(w, c, i - di, j - dj, k - dk));
}

/* G_ij = ∂_j u_i at (i, j, k). */
static inline void grad_u_at(const NwVolume *u, int i, int j, int k, double G[3][3])
{
  for (int r = 0; r < 3; r++)
    for (int a = 0; a < 3; a++)
      G[r][a] = field_diff(u, r, a, i, j, k);
}

/* Whether (i, j, k) lies on the outermost layer of an axis longer than one. */
static inline gboolean on_border(const NwVolume *v, int i, int j, int k)
{
  return (v->nx > 1 && (i == 0 || i == v->nx - 1)) || (v->ny > 1 && (j == 0 || j == v->ny - 1)) ||
         (v->nz > 1 && (k == 0 || k == v->nz - 1));
}

/* The cofactor matrix of D (cof_ij = (-1)^(i+j) minor_ij = ∂ det D / ∂ D_ij); returns det D. */
static inline double cofactor3(const double D[3][3], double C[3][3])
{
  C[0][0] = D[1][1] * D[2][2] - D[1][2] * D[2][1];
  C[0][1] = -(D[1][0] * D[2][2] - D[1][2] * D[2][0]);
  C[0][2] = D[1][0] * D[2][1] - D[1][1] * D[2][0];
  C[1][0] = -(D[0][1] * D[2][2] - D[0][2] * D[2][1]);
  C[1][1] = D[0][0] * D[2][2] - D[0][2] * D[2][0];
  C[1][2] = -(D[0][0] * D[2][1] - D[0][1] * D[2][0]);
  C[2][0] = D[0][1] * D[1][2] - D[0][2] * D[1][1];
  C[2][1] = -(D[0][0] * D[1][2] - D[0][2] * D[1][0]);
  C[2][2] = D[0][0] * D[1][1] - D[0][1] * D[1][0];
  return D[0][0] * C[0][0] + D[0][1] * C[0][1] + D[0][2] * C[0][2];
}

/* ---- the kernels ---------------------------------------------------------------------- */

/* The two taps of the trilinear interpolant along one axis of n voxels at coordinate x:
 * for its value (idx, w) and for its derivative (didx, dw). x is clamped to [0, n - 1] first
 * (resample.h), so the derivative is 0 outside and along an axis of size 1; inside a cell it
 * is the difference of the cell's two taps, and exactly on a voxel (the kink of the
 * interpolant) the mean of the two cells' differences, i.e. the central difference. */
typedef struct {
  int idx[2], didx[2];
  double w[2], dw[2];
} AxisTaps;

static inline void axis_taps(double x, int n, AxisTaps *t)
{
  const double xc = fmin(fmax(x, 0.0), (double)(n - 1));
  int i0 = (int)floor(xc);
  if (i0 > n - 2)
    i0 = n > 1 ? n - 2 : 0;
  const int i1 = n > 1 ? i0 + 1 : 0;
  const double f = n > 1 ? xc - i0 : 0.0;
  *t = (AxisTaps){{i0, i1}, {i0, i1}, {1.0 - f, f}, {-1.0, 1.0}};
  if (n == 1 || x < 0.0 || x > n - 1) { /* clamped: the interpolant is flat there */
    t->dw[0] = t->dw[1] = 0.0;
  } else if (f == 0.0 && i0 > 0) { /* on voxel i0, inside: central difference */
    t->didx[0] = i0 - 1;
    t->dw[0] = -0.5;
    t->dw[1] = 0.5;
  } else if (f == 1.0 && i1 < n - 1) { /* on voxel i1 = n - 2 or so: central difference */
    t->didx[0] = i0;
    t->didx[1] = i1 + 1;
    t->dw[0] = -0.5;
    t->dw[1] = 0.5;
  }
}

/* Σ over the 8 taps of T, with along each axis a the value taps, or the derivative taps for
 * the axis `deriv` (-1: none). */
static inline double taps_sum(const NwVolume *T, const AxisTaps t[3], int deriv)
{
  double acc = 0.0;
  for (int c = 0; c < 8; c++) {
    const int b[3] = {c & 1, (c >> 1) & 1, (c >> 2) & 1};
    int ix[3];
    double w = 1.0;
    for (int a = 0; a < 3; a++) {
      ix[a] = a == deriv ? t[a].didx[b[a]] : t[a].idx[b[a]];
      w *= a == deriv ? t[a].dw[b[a]] : t[a].w[b[a]];
    }
    if (w != 0.0)
      acc += w * T->data[nw_volume_index(T, ix[0], ix[1], ix[2])];
  }
  return acc;
}

/* Tw = T(x - u) and gTw = ∇T(x - u), value and gradient of the trilinear interpolant. */
static inline void deform_grad_at(NwVolume *Tw, NwVolume *gTw, const NwVolume *T,
                                  const NwVolume *u, int i, int j, int k)
{
  const size_t e = nw_volume_index(u, i, j, k);
  const float *d = u->data + 3 * e;
  AxisTaps t[3];
  axis_taps(i - (double)d[0], T->nx, &t[0]);
  axis_taps(j - (double)d[1], T->ny, &t[1]);
  axis_taps(k - (double)d[2], T->nz, &t[2]);
  Tw->data[e] = (float)taps_sum(T, t, -1);
  for (int a = 0; a < 3; a++)
    gTw->data[3 * e + a] = (float)taps_sum(T, t, a);
}

void nw_fluid_deform_grad_cpu(NwVolume *Tw, NwVolume *gTw, const NwVolume *T, const NwVolume *u)
{
  g_return_if_fail(Tw->nc == 1 && gTw->nc == 3 && T->nc == 1 && u->nc == 3);
#pragma omp parallel for schedule(static)
  for (int k = 0; k < u->nz; k++)
    for (int j = 0; j < u->ny; j++)
      for (int i = 0; i < u->nx; i++)
        deform_grad_at(Tw, gTw, T, u, i, j, k);
}

/* out(x) = in(x - u(x)) at one voxel. */
static inline void deform_at(NwVolume *out, const NwVolume *in, const NwVolume *u, int i, int j,
                             int k)
{
  const size_t e = nw_volume_index(u, i, j, k);
  const float *d = u->data + 3 * e;
  const double x = i - d[0], y = j - d[1], z = k - d[2];
  if (in->nc == 3) {
    nw_field_sample(in, x, y, z, out->data + 3 * e);
    return;
  }
  for (int c = 0; c < in->nc; c++)
    out->data[e * in->nc + c] = nw_sample_trilinear(in, c, x, y, z);
}

void nw_fluid_deform_cpu(NwVolume *out, const NwVolume *in, const NwVolume *u)
{
  g_return_if_fail(out->nc == in->nc && u->nc == 3);
#pragma omp parallel for schedule(static)
  for (int k = 0; k < u->nz; k++)
    for (int j = 0; j < u->ny; j++)
      for (int i = 0; i < u->nx; i++)
        deform_at(out, in, u, i, j, k);
}

void nw_fluid_region_cpu(NwVolume *region, const NwVolume *fixed_mask,
                         const NwVolume *moving_mask_d)
{
  const size_t n = nw_volume_n_voxels(region);
#pragma omp parallel for schedule(static)
  for (size_t e = 0; e < n; e++) {
    const gboolean in_f = fixed_mask == NULL || fixed_mask->data[e] >= 0.5f;
    const gboolean in_m = moving_mask_d == NULL || moving_mask_d->data[e] >= 0.5f;
    region->data[e] = in_f && in_m ? 1.0f : 0.0f;
  }
}

/* J and P = L'(J) cof(D) at one voxel (P may be NULL). */
static inline void jacobian_at(NwVolume *Jv, NwVolume *P, const NwVolume *u, int i, int j, int k)
{
  double G[3][3], D[3][3], C[3][3];
  grad_u_at(u, i, j, k, G);
  for (int r = 0; r < 3; r++)
    for (int a = 0; a < 3; a++)
      D[r][a] = (r == a) - G[r][a];
  const double J = cofactor3(D, C);
  const size_t e = nw_volume_index(u, i, j, k);
  Jv->data[e] = (float)J;
  if (P == NULL)
    return;
  const double Lp = J > 0.0 ? 1.0 + log(J) - 1.0 / J : 0.0; /* L'(J); 0 at a fold */
  for (int r = 0; r < 3; r++)
    for (int a = 0; a < 3; a++)
      P->data[9 * e + 3 * r + a] = (float)(Lp * C[r][a]);
}

void nw_fluid_jacobian_cpu(NwVolume *J, NwVolume *P, const NwVolume *u)
{
  g_return_if_fail(J->nc == 1 && u->nc == 3 && (P == NULL || P->nc == 9));
#pragma omp parallel for schedule(static)
  for (int k = 0; k < u->nz; k++)
    for (int j = 0; j < u->ny; j++)
      for (int i = 0; i < u->nx; i++)
        jacobian_at(J, P, u, i, j, k);
}

/* f at one voxel: the L2 force [Tw - R] ∇T(x - u) inside the region, minus λ d. */
static inline void force_at(NwVolume *f, const NwVolume *R, const NwVolume *Tw,
                            const NwVolume *gTw, const NwVolume *P, const NwVolume *region,
                            double lambda, int i, int j, int k)
{
  const size_t e = nw_volume_index(R, i, j, k);
  const double res = region == NULL || region->data[e] != 0.0f ? (double)Tw->data[e] - R->data[e]
                                                               : 0.0;
  for (int r = 0; r < 3; r++) {
    double d = 0.0; /* d_r = Σ_a ∂_a P_ra */
    for (int a = 0; a < 3; a++)
      d += field_diff(P, 3 * r + a, a, i, j, k);
    f->data[3 * e + r] = (float)(res * gTw->data[3 * e + r] - lambda * d);
  }
}

void nw_fluid_force_cpu(NwVolume *f, const NwVolume *R, const NwVolume *Tw, const NwVolume *gTw,
                        const NwVolume *P, const NwVolume *region, double lambda)
{
  g_return_if_fail(f->nc == 3 && gTw->nc == 3 && P->nc == 9);
#pragma omp parallel for schedule(static)
  for (int k = 0; k < R->nz; k++)
    for (int j = 0; j < R->ny; j++)
      for (int i = 0; i < R->nx; i++)
        force_at(f, R, Tw, gTw, P, region, lambda, i, j, k);
}

/* r = v - (v·∇)u at one voxel (0 on the border); returns |r|. */
static inline double transport_at(NwVolume *r, const NwVolume *u, const NwVolume *v, int i, int j,
                                  int k)
{
  const size_t e = nw_volume_index(u, i, j, k);
  float *out = r->data + 3 * e;
  if (on_border(u, i, j, k)) {
    out[0] = out[1] = out[2] = 0.0f;
    return 0.0;
  }
  double G[3][3];
  grad_u_at(u, i, j, k, G);
  const float *vv = v->data + 3 * e;
  double n2 = 0.0;
  for (int c = 0; c < 3; c++) {
    const double rc = vv[c] - (G[c][0] * vv[0] + G[c][1] * vv[1] + G[c][2] * vv[2]);
    out[c] = (float)rc;
    n2 += (double)out[c] * out[c];
  }
  return sqrt(n2);
}

double nw_fluid_transport_cpu(NwVolume *r, const NwVolume *u, const NwVolume *v)
{
  g_return_val_if_fail(r->nc == 3 && u->nc == 3 && v->nc == 3, 0.0);
  double m = 0.0;
#pragma omp parallel for schedule(static) reduction(max : m)
  for (int k = 0; k < u->nz; k++)
    for (int j = 0; j < u->ny; j++)
      for (int i = 0; i < u->nx; i++)
        m = fmax(m, transport_at(r, u, v, i, j, k));
  return m;
}

/* u_tot at one voxel: u_new(x) + u_prev(x - u_new(x)). */
static inline void compose_at(NwVolume *out, const NwVolume *u_prev, const NwVolume *u_new, int i,
                              int j, int k)
{
  const size_t e = nw_volume_index(u_new, i, j, k);
  const float *a = u_new->data + 3 * e;
  float b[3];
  nw_field_sample(u_prev, i - a[0], j - a[1], k - a[2], b);
  for (int c = 0; c < 3; c++)
    out->data[3 * e + c] = a[c] + b[c];
}

void nw_fluid_compose_cpu(NwVolume *out, const NwVolume *u_prev, const NwVolume *u_new)
{
  g_return_if_fail(out != u_prev && out != u_new);
#pragma omp parallel for schedule(static)
  for (int k = 0; k < u_new->nz; k++)
    for (int j = 0; j < u_new->ny; j++)
      for (int i = 0; i < u_new->nx; i++)
        compose_at(out, u_prev, u_new, i, j, k);
}

void nw_fluid_zero_border_cpu(NwVolume *u)
{
#pragma omp parallel for schedule(static)
  for (int k = 0; k < u->nz; k++)
    for (int j = 0; j < u->ny; j++)
      for (int i = 0; i < u->nx; i++)
        if (on_border(u, i, j, k))
          for (int c = 0; c < u->nc; c++)
            u->data[nw_volume_index(u, i, j, k) * u->nc + c] = 0.0f;
}

/* The energy sums' inputs, for the chunks of nw_ordered_reduce. */
typedef struct {
  const NwVolume *R, *Tw, *J, *region;
} FluidSumsIn;

enum { F_L2, F_NREGION, F_SKL, F_SUMLOG, F_NFOLDS, F_MIN, F_MAX, F_COUNT };

static void fluid_sums_chunk(double *a, size_t begin, size_t end, const void *user)
{
  const FluidSumsIn *in = user;
  for (size_t e = begin; e < end; e++) {
    if (in->region == NULL || in->region->data[e] != 0.0f) {
      const double d = (double)in->Tw->data[e] - in->R->data[e];
      a[F_L2] += 0.5 * d * d;
      a[F_NREGION] += 1.0;
    }
    const double j = in->J->data[e];
    a[F_MIN] = fmin(a[F_MIN], j);
    a[F_MAX] = fmax(a[F_MAX], j);
    if (j > 0.0) {
      a[F_SKL] += (j - 1.0) * log(j);
      a[F_SUMLOG] += log(j);
    } else {
      a[F_NFOLDS] += 1.0;
    }
  }
}

/* In fixed chunks added in order (ordered_sums.h): the same bits for any thread count, so
 * that the line search's energy comparisons do not depend on it. */
void nw_fluid_sums_cpu(NwFluidSums *s, const NwVolume *R, const NwVolume *Tw, const NwVolume *J,
                       const NwVolume *region)
{
  static const NwCombine kind[F_COUNT] = {NW_COMBINE_SUM, NW_COMBINE_SUM, NW_COMBINE_SUM,
                                          NW_COMBINE_SUM, NW_COMBINE_SUM, NW_COMBINE_MIN,
                                          NW_COMBINE_MAX};
  const FluidSumsIn in = {R, Tw, J, region};
  const size_t n = nw_volume_n_voxels(R);
  double v[F_COUNT];
  nw_ordered_reduce(v, F_COUNT, kind, n, fluid_sums_chunk, &in);
  *s = (NwFluidSums){v[F_L2],     v[F_NREGION], v[F_SKL], v[F_SUMLOG],
                     v[F_NFOLDS], v[F_MIN],     v[F_MAX], (double)n};
}

double nw_fluid_energy(const NwFluidSums *s, double lambda)
{
  return s->n_folds > 0 ? INFINITY : s->l2 + lambda * s->skl;
}
