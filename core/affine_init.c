/* affine_init.c — see affine_init.h. Principal axes by GSL's symmetric eigensolver. */
#include "affine_init.h"

#include <gsl/gsl_eigen.h>
#include <math.h>
#include <string.h>

#include "mat3.h"
#include "ras_affine.h"

void nw_volume_centre_mm(const NwVolume *v, double centre_mm[3])
{
  const double ijk[3] = {(v->nx - 1) / 2.0, (v->ny - 1) / 2.0, (v->nz - 1) / 2.0};
  nw_volume_voxel_to_world(v, ijk, centre_mm);
}

gboolean nw_volume_moments(const NwVolume *v, const NwVolume *mask, double com_mm[3], double cov[9])
{
  const size_t n = nw_volume_n_voxels(v);
  float lo = INFINITY;
  for (size_t e = 0; e < n; e++)
    if (mask == NULL || mask->data[e] >= 0.5f)
      lo = MIN(lo, v->data[e]);
  /* Sums in voxel indices, then mapped: first and second moments. A row's sums of q, q i and
   * q i² carry its part of every moment (j and k are the row's own), so a voxel costs three
   * additions instead of twelve: a start's moments at a 3072² job's coarsest level took 1 ms
   * an image the other way (on this project's 2-core development VM). */
  double w = 0.0, s[3] = {0}, ss[9] = {0};
  for (int k = 0; k < v->nz; k++)
    for (int j = 0; j < v->ny; j++) {
      const size_t row = nw_volume_index(v, 0, j, k);
      double r0 = 0.0, r1 = 0.0, r2 = 0.0;
      for (int i = 0; i < v->nx; i++) {
        if (mask != NULL && !(mask->data[row + i] >= 0.5f))
          continue;
        const double q = (double)v->data[row + i] - (double)lo, qi = q * i;
        r0 += q;
        r1 += qi;
        r2 += qi * i;
      }
      const double dj = j, dk = k;
      w += r0;
      s[0] += r1;
      s[1] += dj * r0;
      s[2] += dk * r0;
      ss[0] += r2;
      ss[1] += dj * r1;
      ss[2] += dk * r1;
      ss[4] += dj * dj * r0;
      ss[5] += dj * dk * r0;
      ss[8] += dk * dk * r0;
    }
  ss[3] = ss[1];
  ss[6] = ss[2];
  ss[7] = ss[5];
  if (!(w > 0.0))
    return FALSE;
  double mean[3], cov_vox[9];
  for (int a = 0; a < 3; a++)
    mean[a] = s[a] / w;
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++)
      cov_vox[a * 3 + b] = ss[a * 3 + b] / w - mean[a] * mean[b];
  nw_volume_voxel_to_world(v, mean, com_mm);
  /* cov_world = L cov_vox L^T, L the affine's linear part */
  const double *A = v->vox_to_ras;
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) {
      double x = 0.0;
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
          x += A[r * 4 + a] * cov_vox[a * 3 + b] * A[c * 4 + b];
      cov[r * 3 + c] = x;
    }
  return TRUE;
}

/* Eigenvectors of the symmetric dim x dim block of cov as the columns of e (3x3, row-major,
 * identity outside the block), by decreasing eigenvalue. */
static void principal_axes(const double cov[9], int dim, double e[9])
{
  double a[9];
  for (int r = 0; r < dim; r++)
    for (int c = 0; c < dim; c++)
      a[r * dim + c] = cov[r * 3 + c];
  gsl_matrix_view m = gsl_matrix_view_array(a, dim, dim);
  gsl_vector *eval = gsl_vector_alloc(dim);
  gsl_matrix *evec = gsl_matrix_alloc(dim, dim);
  gsl_eigen_symmv_workspace *ws = gsl_eigen_symmv_alloc(dim);
  gsl_eigen_symmv(&m.matrix, eval, evec, ws);
  gsl_eigen_symmv_sort(eval, evec, GSL_EIGEN_SORT_VAL_DESC);
  memset(e, 0, 9 * sizeof(double));
  e[0] = e[4] = e[8] = 1.0;
  for (int r = 0; r < dim; r++)
    for (int c = 0; c < dim; c++)
      e[r * 3 + c] = gsl_matrix_get(evec, r, c);
  gsl_eigen_symmv_free(ws);
  gsl_matrix_free(evec);
  gsl_vector_free(eval);
}

/* r = em · diag(sign) · ef^T, 3x3: fixed's principal axes onto moving's. */
static void rotation_between(const double em[9], const double ef[9], const int sign[3], double r[9])
{
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double x = 0.0;
      for (int q = 0; q < 3; q++)
        x += em[i * 3 + q] * sign[q] * ef[j * 3 + q];
      r[i * 3 + j] = x;
    }
}

/* Rotation about world axis a by angle, as a 4x4. */
static void axis_rotation(int a, double angle, double m[16])
{
  nw_affine_identity(m);
  const int p = (a + 1) % 3, q = (a + 2) % 3;
  m[p * 4 + p] = m[q * 4 + q] = cos(angle);
  m[q * 4 + p] = sin(angle);
  m[p * 4 + q] = -sin(angle);
}

typedef struct {
  double m[16];
} Mat4;

/* base with linear part rot · (base's K · S) and the translation that sends cf to cm. */
static void add_start(GArray *out, const NwTransform *base, const double rot[16],
                      const double cf[3], const double cm[3])
{
  NwTransform ks = *base, t;
  memset(ks.rotation_rad, 0, sizeof ks.rotation_rad);
  memset(ks.translation_mm, 0, sizeof ks.translation_mm);
  double m[16];
  nw_transform_matrix(&ks, m);
  nw_affine_mul(rot, m, m);
  if (!nw_transform_from_matrix(&t, base->dim, base->kind, base->centre_mm, m, NULL))
    return;
  /* T(cf) = cm: t = cm - c - A (cf - c) */
  memset(t.translation_mm, 0, sizeof t.translation_mm);
  double at[3];
  nw_transform_matrix(&t, m);
  nw_affine_apply(m, cf, at); /* = A (cf - c) + c */
  for (int i = 0; i < base->dim; i++)
    t.translation_mm[i] = cm[i] - at[i];
  g_array_append_val(out, t);
}

GArray *nw_affine_starts(const NwVolume *fixed, const NwVolume *fixed_mask, const NwVolume *moving,
                         const NwVolume *moving_mask, const NwTransform *base,
                         const NwAffineStartSpec *spec)
{
  GArray *out = g_array_new(FALSE, FALSE, sizeof(NwTransform));
  const int dim = base->dim;
  double cf[3], cm[3], covf[9], covm[9];
  Mat4 eye;
  nw_affine_identity(eye.m);
  gboolean mass = spec->init != NW_AFFINE_INIT_GEOMETRY &&
                  nw_volume_moments(fixed, fixed_mask, cf, covf) &&
                  nw_volume_moments(moving, moving_mask, cm, covm);
  if (!mass) {
    nw_volume_centre_mm(fixed, cf);
    nw_volume_centre_mm(moving, cm);
  }
  GArray *bases = g_array_new(FALSE, FALSE, sizeof(Mat4));
  g_array_append_val(bases, eye);
  if (mass && spec->init == NW_AFFINE_INIT_MOMENTS) {
    double ef[9], em[9];
    principal_axes(covf, dim, ef);
    principal_axes(covm, dim, em);
    g_array_set_size(bases, 0);
    /* Eigenvectors have no sign: every flip of a pair of axes is another rotation. */
    for (int s = 0; s < (dim == 2 ? 2 : 4); s++) {
      int sign[3] = {1, 1, 1};
      if (s & 1)
        sign[0] = sign[1] = -1;
      if (s & 2)
        sign[1] = sign[2] = -1;
      double r[9];
      Mat4 m;
      rotation_between(em, ef, sign, r);
      if (nw_mat3_det(r) <
          0.0) { /* the eigen-solver's bases differ in handedness: flip the last axis */
        sign[dim - 1] = -sign[dim - 1];
        rotation_between(em, ef, sign, r);
      }
      nw_affine_identity(m.m);
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
          m.m[i * 4 + j] = r[i * 3 + j];
      g_array_append_val(bases, m);
    }
  }
  const int n_rot = spec->rotation_starts;
  for (guint b = 0; b < bases->len; b++) {
    const double *rb = g_array_index(bases, Mat4, b).m;
    add_start(out, base, rb, cf, cm);
    for (int a = dim == 2 ? 2 : 0; a < 3 && n_rot >= 2; a++)
      for (int k = 1; k < n_rot; k++) {
        double r[16];
        axis_rotation(a, 2.0 * G_PI * k / n_rot, r);
        nw_affine_mul(rb, r, r);
        add_start(out, base, r, cf, cm);
      }
  }
  g_array_unref(bases);
  return out;
}
