/* ras_affine.c — see ras_affine.h. */
#include "ras_affine.h"

#include <math.h>
#include <string.h>

#include "mat3.h"

void nw_affine_identity(double m[16])
{
  memset(m, 0, 16 * sizeof(double));
  m[0] = m[5] = m[10] = m[15] = 1.0;
}

void nw_affine_mul(const double a[16], const double b[16], double out[16])
{
  double r[16];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) {
      double s = 0.0;
      for (int k = 0; k < 4; k++)
        s += a[i * 4 + k] * b[k * 4 + j];
      r[i * 4 + j] = s;
    }
  memcpy(out, r, sizeof r);
}

gboolean nw_affine_inverse(const double m[16], double inv[16])
{
  double lin[9], li[9];
  nw_mat3_from_affine(m, lin);
  if (fabs(nw_mat3_inverse(lin, li)) < 1e-12)
    return FALSE;
  nw_affine_identity(inv);
  for (int r = 0; r < 3; r++) {
    double t = 0.0;
    for (int c = 0; c < 3; c++) {
      inv[r * 4 + c] = li[r * 3 + c];
      t += li[r * 3 + c] * m[c * 4 + 3];
    }
    inv[r * 4 + 3] = -t; /* x = L^-1 (y - b) */
  }
  return TRUE;
}

void nw_affine_apply(const double m[16], const double p[3], double out[3])
{
  double r[3];
  for (int i = 0; i < 3; i++)
    r[i] = m[i * 4 + 0] * p[0] + m[i * 4 + 1] * p[1] + m[i * 4 + 2] * p[2] + m[i * 4 + 3];
  memcpy(out, r, sizeof r);
}

void nw_affine_ras_lps(double m[16])
{
  nw_affine_identity(m);
  m[0] = m[5] = -1.0;
}
