/* field.c — displacement/velocity field operations (see field.h): sampling, composition,
 * exponential by scaling and squaring, Jacobian determinants, folds, label Dice.
 * CPU reference (OpenMP); fields in voxel units, nc = 3, x fastest. Any thread. */
#include "field.h"

#include <math.h>
#include <string.h>

#include "ordered_sums.h"

/* Clamp a continuous coordinate into [0, n-1] and split it into the lower index and the
 * weight of the upper neighbour; i1 stays inside the grid. */
static inline void clamp_split(double x, int n, int *i0, int *i1, float *w)
{
  if (x <= 0.0 || n == 1) {
    *i0 = *i1 = 0;
    *w = 0.0f;
    return;
  }
  if (x >= n - 1) {
    *i0 = *i1 = n - 1;
    *w = 0.0f;
    return;
  }
  int i = (int)x;
  *i0 = i;
  *i1 = i + 1;
  *w = (float)(x - i);
}

void nw_field_sample(const NwVolume *u, double x, double y, double z, float out[3])
{
  if (isnan(x) || isnan(y) || isnan(z)) {
    out[0] = out[1] = out[2] = NAN;
    return;
  }
  int i0, i1, j0, j1, k0, k1;
  float wx, wy, wz;
  clamp_split(x, u->nx, &i0, &i1, &wx);
  clamp_split(y, u->ny, &j0, &j1, &wy);
  clamp_split(z, u->nz, &k0, &k1, &wz);
  const float *p000 = u->data + 3 * nw_volume_index(u, i0, j0, k0);
  const float *p100 = u->data + 3 * nw_volume_index(u, i1, j0, k0);
  const float *p010 = u->data + 3 * nw_volume_index(u, i0, j1, k0);
  const float *p110 = u->data + 3 * nw_volume_index(u, i1, j1, k0);
  const float *p001 = u->data + 3 * nw_volume_index(u, i0, j0, k1);
  const float *p101 = u->data + 3 * nw_volume_index(u, i1, j0, k1);
  const float *p011 = u->data + 3 * nw_volume_index(u, i0, j1, k1);
  const float *p111 = u->data + 3 * nw_volume_index(u, i1, j1, k1);
  for (int c = 0; c < 3; c++) {
    float a = p000[c] + wx * (p100[c] - p000[c]);
    float b = p010[c] + wx * (p110[c] - p010[c]);
    float d = p001[c] + wx * (p101[c] - p001[c]);
    float e = p011[c] + wx * (p111[c] - p011[c]);
    float f = a + wy * (b - a);
    float g = d + wy * (e - d);
    out[c] = f + wz * (g - f);
  }
}

double nw_field_max_norm(const NwVolume *u)
{
  g_return_val_if_fail(u->nc == 3, 0.0);
  const size_t n = nw_volume_n_voxels(u);
  double m2 = 0.0;
#pragma omp parallel for reduction(max : m2) schedule(static)
  for (size_t e = 0; e < n; e++) {
    const float *p = u->data + 3 * e;
    double d2 = (double)p[0] * p[0] + (double)p[1] * p[1] + (double)p[2] * p[2];
    if (d2 > m2)
      m2 = d2;
  }
  return sqrt(m2);
}

void nw_field_compose(NwVolume *out, const NwVolume *a, const NwVolume *b)
{
  g_return_if_fail(out->nc == 3 && a->nc == 3 && b->nc == 3);
  g_return_if_fail(out != a && out != b);
  g_return_if_fail(nw_volume_n_voxels(out) == nw_volume_n_voxels(a) &&
                   nw_volume_n_voxels(a) == nw_volume_n_voxels(b));
  const int nx = out->nx, ny = out->ny, nz = out->nz;
#pragma omp parallel for schedule(static)
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++) {
        size_t e = 3 * nw_volume_index(out, i, j, k);
        const float *pb = b->data + e;
        float av[3];
        nw_field_sample(a, i + (double)pb[0], j + (double)pb[1], k + (double)pb[2], av);
        for (int c = 0; c < 3; c++)
          out->data[e + c] = pb[c] + av[c];
      }
}

int nw_field_exp_squarings_for_norm(double max_norm)
{
  int n = 0;
  while (n < 30 && ldexp(max_norm, -n) > 0.5)
    n++;
  return n;
}

int nw_field_exp_squarings(const NwVolume *v)
{
  return nw_field_exp_squarings_for_norm(nw_field_max_norm(v));
}

int nw_field_exp(NwVolume *out, const NwVolume *v, double sign)
{
  g_autoptr(NwVolume) scratch = nw_volume_copy(v);
  return nw_field_exp_scratch(out, v, sign, scratch);
}

int nw_field_exp_scratch(NwVolume *out, const NwVolume *v, double sign, NwVolume *scratch)
{
  g_return_val_if_fail(out->nc == 3 && v->nc == 3 && scratch->nc == 3, 0);
  g_return_val_if_fail(scratch != out && scratch != v, 0);
  const int n_sq = nw_field_exp_squarings(v);
  const size_t nf = nw_volume_n_floats(v);
  const float scale = (float)(sign * ldexp(1.0, -n_sq));
  for (size_t e = 0; e < nf; e++)
    out->data[e] = scale * v->data[e];
  NwVolume *cur = out, *next = scratch;
  for (int s = 0; s < n_sq; s++) {
    nw_field_compose(next, cur, cur); /* s <- s ∘ s */
    NwVolume *t = cur;
    cur = next;
    next = t;
  }
  if (cur != out)
    memcpy(out->data, cur->data, nf * sizeof(float));
  return n_sq; /* N = 0: out = v, the first-order exponential of a small field */
}

/* Derivative of component c of u along axis `axis` at voxel (i, j, k): central difference
 * inside, one-sided at the borders, 0 along an axis of size 1. Voxel units. */
static inline double field_deriv(const NwVolume *u, int c, int axis, int i, int j, int k)
{
  int n = axis == 0 ? u->nx : axis == 1 ? u->ny : u->nz;
  int p = axis == 0 ? i : axis == 1 ? j : k;
  if (n == 1)
    return 0.0;
  int lo = p > 0 ? p - 1 : p;
  int hi = p < n - 1 ? p + 1 : p;
  int il = i, jl = j, kl = k, ih = i, jh = j, kh = k;
  if (axis == 0) {
    il = lo;
    ih = hi;
  } else if (axis == 1) {
    jl = lo;
    jh = hi;
  } else {
    kl = lo;
    kh = hi;
  }
  double fl = u->data[3 * nw_volume_index(u, il, jl, kl) + c];
  double fh = u->data[3 * nw_volume_index(u, ih, jh, kh) + c];
  return (fh - fl) / (double)(hi - lo);
}

static inline double jacobian_det_at(const NwVolume *u, int i, int j, int k)
{
  double m[3][3]; /* m[c][axis] = δ(c, axis) + ∂u_c/∂x_axis */
  for (int c = 0; c < 3; c++)
    for (int a = 0; a < 3; a++)
      m[c][a] = (c == a ? 1.0 : 0.0) + field_deriv(u, c, a, i, j, k);
  return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
         m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

void nw_field_jacobian_det(NwVolume *out, const NwVolume *u)
{
  g_return_if_fail(u->nc == 3 && out->nc == 1);
  g_return_if_fail(nw_volume_n_voxels(out) == nw_volume_n_voxels(u));
  const int nx = u->nx, ny = u->ny, nz = u->nz;
#pragma omp parallel for schedule(static)
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++)
        out->data[nw_volume_index(u, i, j, k)] = (float)jacobian_det_at(u, i, j, k);
}

enum { J_MIN, J_MAX, J_SUM, J_FOLDS, J_COUNT };

static void jacobian_stats_chunk(double *a, size_t begin, size_t end, const void *user)
{
  const NwVolume *det = user;
  for (size_t e = begin; e < end; e++) {
    const double d = det->data[e];
    a[J_MIN] = d < a[J_MIN] ? d : a[J_MIN];
    a[J_MAX] = d > a[J_MAX] ? d : a[J_MAX];
    a[J_SUM] += d;
    a[J_FOLDS] += d <= 0.0;
  }
}

/* The mean's sum in fixed chunks added in order (ordered_sums.h): the same bits for any
 * thread count. */
void nw_jacobian_stats(const NwVolume *det, NwJacobianStats *stats)
{
  static const NwCombine kind[J_COUNT] = {NW_COMBINE_MIN, NW_COMBINE_MAX, NW_COMBINE_SUM,
                                          NW_COMBINE_SUM};
  const size_t n = nw_volume_n_voxels(det);
  double v[J_COUNT];
  nw_ordered_reduce(v, J_COUNT, kind, n, jacobian_stats_chunk, det);
  stats->min = v[J_MIN];
  stats->max = v[J_MAX];
  stats->mean = n > 0 ? v[J_SUM] / (double)n : 0.0;
  stats->n_folds = (size_t)v[J_FOLDS];
}

size_t nw_field_count_folds(const NwVolume *u)
{
  g_return_val_if_fail(u->nc == 3, 0);
  const int nx = u->nx, ny = u->ny, nz = u->nz;
  size_t folds = 0;
#pragma omp parallel for reduction(+ : folds) schedule(static)
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++)
        folds += jacobian_det_at(u, i, j, k) <= 0.0;
  return folds;
}

void nw_field_axpy(NwVolume *out, const NwVolume *a, double scale, const NwVolume *b)
{
  g_return_if_fail(nw_volume_n_floats(out) == nw_volume_n_floats(a) &&
                   nw_volume_n_floats(a) == nw_volume_n_floats(b));
  const size_t n = nw_volume_n_floats(out);
  const float s = (float)scale;
#pragma omp parallel for schedule(static)
  for (size_t e = 0; e < n; e++)
    out->data[e] = a->data[e] + s * b->data[e];
}

static int label_of(float v)
{
  return isfinite(v) ? (int)lrintf(v) : 0;
}

static gint cmp_label_dice(gconstpointer x, gconstpointer y)
{
  const NwLabelDice *a = x, *b = y;
  return (a->label > b->label) - (a->label < b->label);
}

GArray *nw_labels_dice(const NwVolume *a, const NwVolume *b, double *mean_dice)
{
  GArray *out = g_array_new(FALSE, TRUE, sizeof(NwLabelDice));
  g_return_val_if_fail(nw_volume_n_floats(a) == nw_volume_n_floats(b), out);
  /* label -> index into out; labels may be sparse (AAL uses 2001..9170). */
  g_autoptr(GHashTable) index = g_hash_table_new(g_direct_hash, g_direct_equal);
  const size_t n = nw_volume_n_floats(a);
  for (size_t e = 0; e < n; e++) {
    int la = label_of(a->data[e]), lb = label_of(b->data[e]);
    for (int side = 0; side < 2; side++) {
      int l = side == 0 ? la : lb;
      if (l <= 0)
        continue;
      gpointer key = GINT_TO_POINTER(l), val;
      guint idx;
      if (g_hash_table_lookup_extended(index, key, NULL, &val)) {
        idx = GPOINTER_TO_UINT(val);
      } else {
        NwLabelDice d = {.label = l};
        idx = out->len;
        g_array_append_val(out, d);
        g_hash_table_insert(index, key, GUINT_TO_POINTER(idx));
      }
      NwLabelDice *d = &g_array_index(out, NwLabelDice, idx);
      if (side == 0)
        d->n_a++;
      else
        d->n_b++;
      if (side == 0 && la == lb)
        d->n_both++;
    }
  }
  g_array_sort(out, cmp_label_dice);
  double sum = 0.0;
  for (guint i = 0; i < out->len; i++) {
    NwLabelDice *d = &g_array_index(out, NwLabelDice, i);
    d->dice = 2.0 * (double)d->n_both / (double)(d->n_a + d->n_b);
    sum += d->dice;
  }
  if (mean_dice != NULL)
    *mean_dice = out->len > 0 ? sum / out->len : 0.0;
  return out;
}

void nw_image_similarity(const NwVolume *a, const NwVolume *b, double *mse, double *ncc)
{
  double n = 0, sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0, sd2 = 0;
  const size_t count = nw_volume_n_voxels(a);
  for (size_t i = 0; i < count; i++) {
    const double x = a->data[i], y = b->data[i];
    if (!isfinite(x) || !isfinite(y))
      continue;
    n++, sa += x, sb += y, saa += x * x, sbb += y * y, sab += x * y, sd2 += (x - y) * (x - y);
  }
  *mse = n > 0 ? sd2 / n : 0.0;
  const double va = saa - sa * sa / MAX(n, 1), vb = sbb - sb * sb / MAX(n, 1);
  *ncc = va > 0 && vb > 0 ? (sab - sa * sb / n) / sqrt(va * vb) : 0.0;
}
