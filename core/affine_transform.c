/* affine_transform.c — see affine_transform.h. */
#include "affine_transform.h"

#include <math.h>
#include <string.h>

#include "mat3.h"
#include "ras_affine.h"
#include "nw_error.h"

const char *nw_transform_kind_name(NwTransformKind k)
{
  switch (k) {
  case NW_XFORM_RIGID:
    return "rigid";
  case NW_XFORM_SIMILARITY:
    return "similarity";
  default:
    return "affine";
  }
}

void nw_transform_init(NwTransform *t, int dim, NwTransformKind kind, const double centre_mm[3])
{
  memset(t, 0, sizeof *t);
  t->dim = dim;
  t->kind = kind;
  memcpy(t->centre_mm, centre_mm, sizeof t->centre_mm);
  t->scale[0] = t->scale[1] = t->scale[2] = 1.0;
}

/* A free parameter: which member array and which element. */
typedef enum { P_T, P_R, P_S_ISO, P_S, P_K } ParamKind;
typedef struct {
  ParamKind what;
  int axis;
  const char *name;
} ParamSlot;

static const ParamSlot slots3[] = {
    {P_T, 0, "tx"},  {P_T, 1, "ty"},    {P_T, 2, "tz"}, {P_R, 0, "rx"}, {P_R, 1, "ry"},
    {P_R, 2, "rz"},  {P_S_ISO, 0, "s"}, {P_S, 0, "sx"}, {P_S, 1, "sy"}, {P_S, 2, "sz"},
    {P_K, 0, "kxy"}, {P_K, 1, "kxz"},   {P_K, 2, "kyz"}};
static const ParamSlot slots2[] = {{P_T, 0, "tx"},    {P_T, 1, "ty"}, {P_R, 2, "rz"},
                                   {P_S_ISO, 0, "s"}, {P_S, 0, "sx"}, {P_S, 1, "sy"},
                                   {P_K, 0, "kxy"}};

/* The i-th free parameter's slot: rigid takes the first 6 (3D) or 3 (2D) slots, similarity
 * adds s, affine skips s and adds the scales and shears. */
static const ParamSlot *slot(int dim, NwTransformKind kind, int i)
{
  const ParamSlot *s = dim == 2 ? slots2 : slots3;
  const int n_rigid = dim == 2 ? 3 : 6;
  if (i < n_rigid || kind == NW_XFORM_SIMILARITY)
    return &s[i];
  return &s[i + 1];
}

int nw_transform_n_params(int dim, NwTransformKind kind)
{
  const int n_rigid = dim == 2 ? 3 : 6;
  switch (kind) {
  case NW_XFORM_RIGID:
    return n_rigid;
  case NW_XFORM_SIMILARITY:
    return n_rigid + 1;
  default:
    return dim == 2 ? 6 : 12;
  }
}

const char *nw_transform_param_name(int dim, NwTransformKind kind, int i)
{
  g_return_val_if_fail(i >= 0 && i < nw_transform_n_params(dim, kind), "");
  return slot(dim, kind, i)->name;
}

void nw_transform_get_params(const NwTransform *t, double *p)
{
  const int n = nw_transform_n_params(t->dim, t->kind);
  for (int i = 0; i < n; i++) {
    const ParamSlot *s = slot(t->dim, t->kind, i);
    switch (s->what) {
    case P_T:
      p[i] = t->translation_mm[s->axis];
      break;
    case P_R:
      p[i] = t->rotation_rad[s->axis];
      break;
    case P_S_ISO: /* a similarity's one scale; an initial anisotropic one reads as its x */
    case P_S:
      p[i] = t->scale[s->axis];
      break;
    case P_K:
      p[i] = t->shear[s->axis];
      break;
    }
  }
}

void nw_transform_set_params(NwTransform *t, const double *p)
{
  const int n = nw_transform_n_params(t->dim, t->kind);
  for (int i = 0; i < n; i++) {
    const ParamSlot *s = slot(t->dim, t->kind, i);
    switch (s->what) {
    case P_T:
      t->translation_mm[s->axis] = p[i];
      break;
    case P_R:
      t->rotation_rad[s->axis] = p[i];
      break;
    case P_S_ISO:
      for (int a = 0; a < t->dim; a++)
        t->scale[a] = p[i];
      break;
    case P_S:
      t->scale[s->axis] = p[i];
      break;
    case P_K:
      t->shear[s->axis] = p[i];
      break;
    }
  }
}

void nw_transform_param_mm(const NwTransform *t, double radius_mm, double *mm_per_unit)
{
  const int n = nw_transform_n_params(t->dim, t->kind);
  for (int i = 0; i < n; i++)
    mm_per_unit[i] = slot(t->dim, t->kind, i)->what == P_T ? 1.0 : radius_mm;
}

/* R = Rz Ry Rx, row-major 3x3. */
static void rotation_matrix(const double r[3], double m[9])
{
  const double ca = cos(r[0]), sa = sin(r[0]), cb = cos(r[1]), sb = sin(r[1]);
  const double cg = cos(r[2]), sg = sin(r[2]);
  const double rm[9] = {cg * cb,
                        cg * sb * sa - sg * ca,
                        cg * sb * ca + sg * sa,
                        sg * cb,
                        sg * sb * sa + cg * ca,
                        sg * sb * ca - cg * sa,
                        -sb,
                        cb * sa,
                        cb * ca};
  memcpy(m, rm, sizeof rm);
}

void nw_transform_matrix(const NwTransform *t, double m[16])
{
  double r[9];
  rotation_matrix(t->rotation_rad, r);
  const double *s = t->scale, *k = t->shear;
  /* K · S, upper triangular. */
  const double ks[9] = {s[0], k[0] * s[1], k[1] * s[2], 0, s[1], k[2] * s[2], 0, 0, s[2]};
  nw_affine_identity(m);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double v = 0.0;
      for (int q = 0; q < 3; q++)
        v += r[i * 3 + q] * ks[q * 3 + j];
      m[i * 4 + j] = v;
    }
  /* T(x) = A x + (c + t - A c) */
  for (int i = 0; i < 3; i++) {
    double ac = 0.0;
    for (int j = 0; j < 3; j++)
      ac += m[i * 4 + j] * t->centre_mm[j];
    m[i * 4 + 3] = t->centre_mm[i] + t->translation_mm[i] - ac;
  }
}

/* Gram-Schmidt on the columns of a: a = q u, q orthonormal, u upper triangular with a
 * positive diagonal. FALSE when a column is (nearly) dependent on the ones before. */
static gboolean qr3(const double a[9], double q[9], double u[9])
{
  memset(u, 0, 9 * sizeof(double));
  for (int j = 0; j < 3; j++) {
    double v[3] = {a[j], a[3 + j], a[6 + j]};
    for (int p = 0; p < j; p++) {
      double d = q[p] * a[j] + q[3 + p] * a[3 + j] + q[6 + p] * a[6 + j];
      u[p * 3 + j] = d;
      for (int r = 0; r < 3; r++)
        v[r] -= d * q[r * 3 + p];
    }
    double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (n < 1e-12)
      return FALSE;
    u[j * 3 + j] = n;
    for (int r = 0; r < 3; r++)
      q[r * 3 + j] = v[r] / n;
  }
  return TRUE;
}

gboolean nw_transform_from_matrix(NwTransform *t, int dim, NwTransformKind kind,
                                  const double centre_mm[3], const double m[16], GError **error)
{
  double a[9], q[9], u[9];
  nw_mat3_from_affine(m, a);
  const double det = nw_mat3_det(a);
  if (!(det > 1e-12)) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "determinant %g: the matrix is singular or mirrors (a reflection is not a "
                "registration transform)",
                det);
    return FALSE;
  }
  if (dim == 2) {
    const double z[6] = {a[2], a[5], a[6], a[7], a[8] - 1.0, m[11]};
    for (int i = 0; i < 6; i++)
      if (fabs(z[i]) > 1e-6) {
        g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                    "the matrix moves points along z: it is not a 2D transform");
        return FALSE;
      }
  }
  if (!qr3(a, q, u)) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "the matrix is singular");
    return FALSE;
  }
  nw_transform_init(t, dim, kind, centre_mm);
  for (int i = 0; i < 3; i++)
    t->scale[i] = u[i * 3 + i];
  t->shear[0] = u[1] / u[4];
  t->shear[1] = u[2] / u[8];
  t->shear[2] = u[5] / u[8];
  /* q = Rz Ry Rx: q[6] = -sin ry, q[7] = cos ry sin rx, q[8] = cos ry cos rx,
   * q[3] = sin rz cos ry, q[0] = cos rz cos ry. */
  t->rotation_rad[1] = asin(CLAMP(-q[6], -1.0, 1.0));
  t->rotation_rad[0] = atan2(q[7], q[8]);
  t->rotation_rad[2] = atan2(q[3], q[0]);
  /* t = T(c) - c */
  double tc[3];
  nw_affine_apply(m, centre_mm, tc);
  for (int i = 0; i < 3; i++)
    t->translation_mm[i] = dim == 2 && i == 2 ? 0.0 : tc[i] - centre_mm[i];
  return TRUE;
}
