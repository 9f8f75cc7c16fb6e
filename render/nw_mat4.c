/* nw_mat4.c — see nw_mat4.h. Pure math, any thread. */
#include "nw_mat4.h"

#include <math.h>
#include <string.h>

void nw_mat4_identity(double m[16])
{
  memset(m, 0, 16 * sizeof(double));
  m[0] = m[5] = m[10] = m[15] = 1.0;
}

void nw_mat4_mul(double out[16], const double a[16], const double b[16])
{
  double t[16];
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < 4; c++) {
      double s = 0.0;
      for (int k = 0; k < 4; k++)
        s += a[r * 4 + k] * b[k * 4 + c];
      t[r * 4 + c] = s;
    }
  memcpy(out, t, sizeof t);
}

/* Gauss-Jordan elimination with partial pivoting on [m | I]. */
gboolean nw_mat4_invert(double out[16], const double m[16])
{
  double a[4][8];
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < 8; c++)
      a[r][c] = c < 4 ? m[r * 4 + c] : (c - 4 == r ? 1.0 : 0.0);
  for (int c = 0; c < 4; c++) {
    int p = c;
    for (int r = c + 1; r < 4; r++)
      if (fabs(a[r][c]) > fabs(a[p][c]))
        p = r;
    if (fabs(a[p][c]) < 1e-300)
      return FALSE;
    for (int k = 0; k < 8; k++) {
      double t = a[c][k];
      a[c][k] = a[p][k];
      a[p][k] = t;
    }
    double inv = 1.0 / a[c][c];
    for (int k = 0; k < 8; k++)
      a[c][k] *= inv;
    for (int r = 0; r < 4; r++)
      if (r != c && a[r][c] != 0.0) {
        double f = a[r][c];
        for (int k = 0; k < 8; k++)
          a[r][k] -= f * a[c][k];
      }
  }
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < 4; c++)
      out[r * 4 + c] = a[r][c + 4];
  return TRUE;
}

void nw_mat4_apply_point(const double m[16], const double p[3], double out[3])
{
  double t[4];
  for (int r = 0; r < 4; r++)
    t[r] = m[r * 4] * p[0] + m[r * 4 + 1] * p[1] + m[r * 4 + 2] * p[2] + m[r * 4 + 3];
  double w = t[3] != 0.0 ? t[3] : 1.0;
  for (int r = 0; r < 3; r++)
    out[r] = t[r] / w;
}

void nw_mat4_apply_dir(const double m[16], const double d[3], double out[3])
{
  double t[3];
  for (int r = 0; r < 3; r++)
    t[r] = m[r * 4] * d[0] + m[r * 4 + 1] * d[1] + m[r * 4 + 2] * d[2];
  memcpy(out, t, sizeof t);
}

void nw_mat4_perspective(double m[16], double fovy_deg, double aspect, double znear, double zfar)
{
  double f = 1.0 / tan(fovy_deg * G_PI / 360.0);
  memset(m, 0, 16 * sizeof(double));
  m[0] = f / aspect;
  m[5] = f;
  m[10] = (zfar + znear) / (znear - zfar);
  m[11] = 2.0 * zfar * znear / (znear - zfar);
  m[14] = -1.0;
}

static void normalize3(double v[3])
{
  double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  if (n > 0.0)
    for (int i = 0; i < 3; i++)
      v[i] /= n;
}

void nw_mat4_look_at(double m[16], const double eye[3], const double center[3], const double up[3])
{
  double f[3] = {center[0] - eye[0], center[1] - eye[1], center[2] - eye[2]};
  normalize3(f);
  double s[3] = {f[1] * up[2] - f[2] * up[1], f[2] * up[0] - f[0] * up[2],
                 f[0] * up[1] - f[1] * up[0]};
  normalize3(s);
  double u[3] = {s[1] * f[2] - s[2] * f[1], s[2] * f[0] - s[0] * f[2], s[0] * f[1] - s[1] * f[0]};
  nw_mat4_identity(m);
  for (int c = 0; c < 3; c++) {
    m[c] = s[c];
    m[4 + c] = u[c];
    m[8 + c] = -f[c];
  }
  m[3] = -(s[0] * eye[0] + s[1] * eye[1] + s[2] * eye[2]);
  m[7] = -(u[0] * eye[0] + u[1] * eye[1] + u[2] * eye[2]);
  m[11] = f[0] * eye[0] + f[1] * eye[1] + f[2] * eye[2];
}
