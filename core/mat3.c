/* mat3.c — see mat3.h. */
#include "mat3.h"

#include <string.h>

double nw_mat3_det(const double m[9])
{
  return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
         m[2] * (m[3] * m[7] - m[4] * m[6]);
}

double nw_mat3_inverse(const double m[9], double inv[9])
{
  const double det = nw_mat3_det(m);
  if (det == 0.0) {
    memset(inv, 0, 9 * sizeof(double));
    return det;
  }
  inv[0] = (m[4] * m[8] - m[5] * m[7]) / det;
  inv[1] = (m[2] * m[7] - m[1] * m[8]) / det;
  inv[2] = (m[1] * m[5] - m[2] * m[4]) / det;
  inv[3] = (m[5] * m[6] - m[3] * m[8]) / det;
  inv[4] = (m[0] * m[8] - m[2] * m[6]) / det;
  inv[5] = (m[2] * m[3] - m[0] * m[5]) / det;
  inv[6] = (m[3] * m[7] - m[4] * m[6]) / det;
  inv[7] = (m[1] * m[6] - m[0] * m[7]) / det;
  inv[8] = (m[0] * m[4] - m[1] * m[3]) / det;
  return det;
}

void nw_mat3_from_affine(const double affine[16], double m[9])
{
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++)
      m[r * 3 + c] = affine[r * 4 + c];
}
