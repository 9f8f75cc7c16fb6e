/* transform_itk.c — ITK transform files, text (.txt/.tfm) and MATLAB level-4 binary (.mat):
 * see transform_io.h. ITK's physical space is LPS: a RAS map m becomes F m F with
 * F = diag(-1, -1, 1) (nw_affine_ras_lps). Any thread. */
#include "transform_io.h"
#include "transform_io_private.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "input_file.h"
#include "nw_error.h"
#include "ras_affine.h"

/* ---- ITK's parametrisations -> 4x4 ------------------------------------------------------ */

/* T(x) = A (x - c) + c + t as a 4x4 (A 3x3 row-major). */
static void matrix_offset(const double a[9], const double c[3], const double t[3], double m[16])
{
  nw_affine_identity(m);
  for (int r = 0; r < 3; r++) {
    double ac = 0.0;
    for (int k = 0; k < 3; k++) {
      m[r * 4 + k] = a[r * 3 + k];
      ac += a[r * 3 + k] * c[k];
    }
    m[r * 4 + 3] = c[r] + t[r] - ac;
  }
}

static void mul3(const double a[9], const double b[9], double out[9])
{
  double r[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      r[i * 3 + j] = a[i * 3] * b[j] + a[i * 3 + 1] * b[3 + j] + a[i * 3 + 2] * b[6 + j];
  memcpy(out, r, sizeof r);
}

/* Rotation by angle about axis 0, 1 or 2 (right-handed). */
static void axis_rot(int axis, double angle, double r[9])
{
  memset(r, 0, 9 * sizeof(double));
  const int p = (axis + 1) % 3, q = (axis + 2) % 3;
  r[axis * 3 + axis] = 1.0;
  r[p * 3 + p] = r[q * 3 + q] = cos(angle);
  r[q * 3 + p] = sin(angle);
  r[p * 3 + q] = -sin(angle);
}

/* ITK's versor (the vector part of a unit quaternion) as a rotation matrix. */
static void versor_rot(const double v[3], double r[9])
{
  const double x = v[0], y = v[1], z = v[2], w = sqrt(MAX(0.0, 1.0 - x * x - y * y - z * z));
  const double m[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - z * w),     2 * (x * z + y * w),
                       2 * (x * y + z * w),     1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                       2 * (x * z - y * w),     2 * (y * z + x * w),     1 - 2 * (x * x + y * y)};
  memcpy(r, m, sizeof m);
}

typedef struct {
  char type[128]; /* e.g. "AffineTransform_double_3_3" */
  double p[64], f[16];
  int np, nf;
} ItkTransform;

static gboolean counts(const ItkTransform *t, int np, int nf_min, GError **error)
{
  if (t->np == np && t->nf >= nf_min)
    return TRUE;
  g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
              "%s: expected %d parameters and %d fixed parameters, found %d and %d", t->type, np,
              nf_min, t->np, t->nf);
  return FALSE;
}

/* The LPS map of an ITK transform of dimension dim. */
static gboolean itk_to_lps(const ItkTransform *t, int dim, double m[16], GError **error)
{
  const char *ty = t->type;
  double a[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, c[3] = {0}, tr[3] = {0};
  const double *p = t->p, *f = t->f;
  if (g_str_has_prefix(ty, "AffineTransform_") ||
      g_str_has_prefix(ty, "MatrixOffsetTransformBase_")) {
    if (!counts(t, dim * dim + dim, dim, error))
      return FALSE;
    for (int r = 0; r < dim; r++) {
      for (int k = 0; k < dim; k++)
        a[r * 3 + k] = p[r * dim + k];
      tr[r] = p[dim * dim + r];
      c[r] = f[r];
    }
  } else if (g_str_has_prefix(ty, "TranslationTransform_")) {
    if (!counts(t, dim, 0, error))
      return FALSE;
    memcpy(tr, p, (size_t)dim * sizeof(double));
  } else if (dim == 3 && g_str_has_prefix(ty, "Euler3DTransform_")) {
    if (!counts(t, 6, 3, error))
      return FALSE;
    double rx[9], ry[9], rz[9];
    axis_rot(0, p[0], rx);
    axis_rot(1, p[1], ry);
    axis_rot(2, p[2], rz);
    const gboolean zyx = t->nf >= 4 && f[3] != 0.0; /* ITK's ComputeZYX flag */
    mul3(rz, zyx ? ry : rx, a);
    mul3(a, zyx ? rx : ry, a); /* default Z X Y */
    memcpy(tr, p + 3, sizeof tr);
    memcpy(c, f, sizeof c);
  } else if (dim == 3 && (g_str_has_prefix(ty, "VersorRigid3DTransform_") ||
                          g_str_has_prefix(ty, "Similarity3DTransform_"))) {
    const gboolean sim = g_str_has_prefix(ty, "Similarity");
    if (!counts(t, sim ? 7 : 6, 3, error))
      return FALSE;
    versor_rot(p, a);
    for (int e = 0; sim && e < 9; e++)
      a[e] *= p[6];
    memcpy(tr, p + 3, sizeof tr);
    memcpy(c, f, sizeof c);
  } else if (dim == 2 && (g_str_has_prefix(ty, "Euler2DTransform_") ||
                          g_str_has_prefix(ty, "Rigid2DTransform_") ||
                          g_str_has_prefix(ty, "Similarity2DTransform_"))) {
    const gboolean sim = g_str_has_prefix(ty, "Similarity");
    if (!counts(t, sim ? 4 : 3, 2, error))
      return FALSE;
    const double s = sim ? p[0] : 1.0, ang = p[sim ? 1 : 0];
    a[0] = a[4] = s * cos(ang);
    a[1] = -s * sin(ang);
    a[3] = s * sin(ang);
    tr[0] = p[sim ? 2 : 1];
    tr[1] = p[sim ? 3 : 2];
    c[0] = f[0];
    c[1] = f[1];
  } else if (dim == 2 && g_str_has_prefix(ty, "CenteredRigid2DTransform_")) {
    if (!counts(t, 5, 0, error)) /* angle, centre, translation: no fixed parameters */
      return FALSE;
    a[0] = a[4] = cos(p[0]);
    a[1] = -sin(p[0]);
    a[3] = sin(p[0]);
    c[0] = p[1];
    c[1] = p[2];
    tr[0] = p[3];
    tr[1] = p[4];
  } else {
    g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED,
                "transform type %s is not supported (affine, matrix-offset, Euler, rigid, "
                "versor-rigid, similarity and translation transforms are)",
                ty);
    return FALSE;
  }
  matrix_offset(a, c, tr, m);
  return TRUE;
}

/* "Name_double_3_3" -> 3; 0 when the name has no dimension suffix. */
static int type_dim(const char *type)
{
  const size_t n = strlen(type);
  if (n > 4 && type[n - 2] == '_' && type[n - 4] == '_' &&
      (type[n - 1] == '2' || type[n - 1] == '3'))
    return type[n - 1] - '0';
  return 0;
}

static gboolean itk_to_ras(const ItkTransform *t, double m[16], GError **error)
{
  const int dim = type_dim(t->type);
  if (dim == 0) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "transform type %s names no dimension (e.g. _double_3_3)", t->type);
    return FALSE;
  }
  double lps[16], f[16];
  if (!itk_to_lps(t, dim, lps, error))
    return FALSE;
  nw_affine_ras_lps(f);
  nw_affine_mul(lps, f, m);
  nw_affine_mul(f, m, m);
  return TRUE;
}

/* Matrix, translation about the centre and the centre in ITK's LPS terms, for writing:
 * p = (A row-major dim x dim, t), f = c. */
static void ras_to_itk(const double m[16], const double centre_mm[3], int dim, ItkTransform *t)
{
  double f[16], lps[16], c[3] = {-centre_mm[0], -centre_mm[1], centre_mm[2]}, tc[3];
  nw_affine_ras_lps(f);
  nw_affine_mul(m, f, lps);
  nw_affine_mul(f, lps, lps);
  nw_affine_apply(lps, c, tc);
  g_snprintf(t->type, sizeof t->type, "AffineTransform_double_%d_%d", dim, dim);
  t->np = dim * dim + dim;
  t->nf = dim;
  for (int r = 0; r < dim; r++) {
    for (int k = 0; k < dim; k++)
      t->p[r * dim + k] = lps[r * 4 + k];
    t->p[dim * dim + r] = tc[r] - c[r];
    t->f[r] = c[r];
  }
}

/* ---- text ---------------------------------------------------------------------------- */

static char *itk_text(const ItkTransform *t)
{
  GString *s = g_string_new("#Insight Transform File V1.0\n#Transform 0\n");
  g_string_append_printf(s, "Transform: %s\nParameters:", t->type);
  for (int i = 0; i < t->np; i++)
    g_string_append_printf(s, " %.17g", t->p[i]);
  g_string_append(s, "\nFixedParameters:");
  for (int i = 0; i < t->nf; i++)
    g_string_append_printf(s, " %.17g", t->f[i]);
  g_string_append_c(s, '\n');
  return g_string_free(s, FALSE);
}

/* The numbers after "Key:" into out (at most max). */
static gboolean parse_numbers(const char *text, double *out, int max, int *n, GError **error)
{
  g_auto(GStrv) tok = g_strsplit_set(text, " \t\r", -1);
  *n = 0;
  for (int i = 0; tok[i] != NULL; i++) {
    if (tok[i][0] == '\0')
      continue;
    char *end = NULL;
    errno = 0;
    const double v = g_ascii_strtod(tok[i], &end);
    if (*end != '\0' || errno != 0 || !isfinite(v)) {
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "'%s' is not a number", tok[i]);
      return FALSE;
    }
    if (*n >= max) {
      g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "more than %d numbers", max);
      return FALSE;
    }
    out[(*n)++] = v;
  }
  return TRUE;
}

static gboolean parse_itk_text(const char *text, ItkTransform *t, GError **error)
{
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  int n_types = 0;
  gboolean have_p = FALSE;
  memset(t, 0, sizeof *t);
  for (int i = 0; lines[i] != NULL; i++) {
    const char *l = lines[i];
    if (g_str_has_prefix(l, "Transform:")) {
      if (++n_types > 1) {
        g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED,
                    "the file holds several transforms: compose them into one first");
        return FALSE;
      }
      g_strlcpy(t->type, g_strstrip(lines[i] + strlen("Transform:")), sizeof t->type);
    } else if (g_str_has_prefix(l, "Parameters:")) {
      if (!parse_numbers(l + strlen("Parameters:"), t->p, G_N_ELEMENTS(t->p), &t->np, error)) {
        g_prefix_error(error, "Parameters: ");
        return FALSE;
      }
      have_p = TRUE;
    } else if (g_str_has_prefix(l, "FixedParameters:")) {
      if (!parse_numbers(l + strlen("FixedParameters:"), t->f, G_N_ELEMENTS(t->f), &t->nf, error)) {
        g_prefix_error(error, "FixedParameters: ");
        return FALSE;
      }
    }
  }
  if (n_types == 0 || !have_p) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "not an ITK transform file: no 'Transform:' and 'Parameters:' lines");
    return FALSE;
  }
  return TRUE;
}

/* ---- MATLAB level 4 ---------------------------------------------------------------------- */

/* One variable: header (type 0: little-endian doubles, full matrix), rows x 1, name, data. */
static void mat4_variable(GByteArray *b, const char *name, const double *v, int n)
{
  const gint32 h[5] = {0, n, 1, 0, (gint32)strlen(name) + 1};
  for (int i = 0; i < 5; i++) {
    const guint32 le = GUINT32_TO_LE((guint32)h[i]);
    g_byte_array_append(b, (const guint8 *)&le, 4);
  }
  g_byte_array_append(b, (const guint8 *)name, (guint)strlen(name) + 1);
  for (int i = 0; i < n; i++) {
    guint64 bits;
    memcpy(&bits, &v[i], 8);
    bits = GUINT64_TO_LE(bits);
    g_byte_array_append(b, (const guint8 *)&bits, 8);
  }
}

/* Reads one variable at *pos; its name into name, its numbers into v (at most max). */
static gboolean mat4_read_variable(const guint8 *d, gsize len, gsize *pos, char *name,
                                   gsize name_len, double *v, int max, int *n, GError **error)
{
  if (*pos + 20 > len)
    goto truncated;
  guint32 h[5];
  memcpy(h, d + *pos, 20);
  /* The type word is below 10000 in the file's byte order: a big-endian file's reads as a
   * huge number little-endian. */
  const gboolean big = GUINT32_FROM_LE(h[0]) >= 10000 && GUINT32_FROM_BE(h[0]) < 10000;
  for (int i = 0; i < 5; i++)
    h[i] = big ? GUINT32_FROM_BE(h[i]) : GUINT32_FROM_LE(h[i]);
  const int mopt = (int)h[0], prec = (mopt / 10) % 10;
  if (mopt / 1000 > 1 || (mopt / 100) % 10 != 0 || prec > 1 || mopt % 10 != 0 || h[3] != 0) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "not a MATLAB level-4 matrix of doubles or floats (type %d)", mopt);
    return FALSE;
  }
  const guint64 count = (guint64)h[1] * h[2], size = prec == 0 ? 8 : 4;
  *pos += 20;
  if (h[4] == 0 || h[4] > 256 || *pos + h[4] > len)
    goto truncated;
  g_strlcpy(name, (const char *)d + *pos, MIN(name_len, h[4]));
  *pos += h[4];
  if (count > (guint64)max) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "variable %s has %" G_GUINT64_FORMAT " numbers, more than a transform has", name,
                count);
    return FALSE;
  }
  if (*pos + count * size > len)
    goto truncated;
  for (guint64 i = 0; i < count; i++) {
    if (prec == 0) {
      guint64 bits;
      memcpy(&bits, d + *pos + i * 8, 8);
      bits = big ? GUINT64_FROM_BE(bits) : GUINT64_FROM_LE(bits);
      memcpy(&v[i], &bits, 8);
    } else {
      guint32 bits;
      float f;
      memcpy(&bits, d + *pos + i * 4, 4);
      bits = big ? GUINT32_FROM_BE(bits) : GUINT32_FROM_LE(bits);
      memcpy(&f, &bits, 4);
      v[i] = f;
    }
  }
  *pos += count * size;
  *n = (int)count;
  return TRUE;
truncated:
  g_set_error(error, NW_ERROR, NW_ERROR_FORMAT, "truncated MATLAB file (%" G_GSIZE_FORMAT " bytes)",
              len);
  return FALSE;
}

/* ITK's MatlabTransformIO: the parameters under the transform's type name, then "fixed". */
static gboolean parse_itk_mat(const guint8 *d, gsize len, ItkTransform *t, GError **error)
{
  memset(t, 0, sizeof *t);
  gsize pos = 0;
  char fixed_name[64] = "";
  if (!mat4_read_variable(d, len, &pos, t->type, sizeof t->type, t->p, G_N_ELEMENTS(t->p), &t->np,
                          error) ||
      !mat4_read_variable(d, len, &pos, fixed_name, sizeof fixed_name, t->f, G_N_ELEMENTS(t->f),
                          &t->nf, error))
    return FALSE;
  if (strcmp(fixed_name, "fixed") != 0) {
    g_set_error(error, NW_ERROR, NW_ERROR_FORMAT,
                "not an ITK transform: the second variable is '%s', not 'fixed'", fixed_name);
    return FALSE;
  }
  return TRUE;
}

/* ---- the interface ----------------------------------------------------------------------- */

gboolean nw_transform_write_itk(NwOutputs *o, const char *path, const double m[16],
                                const double centre_mm[3], int dim, GError **error)
{
  ItkTransform t;
  ras_to_itk(m, centre_mm, dim, &t);
  if (g_str_has_suffix(path, ".mat")) {
    g_autoptr(GByteArray) b = g_byte_array_new();
    mat4_variable(b, t.type, t.p, t.np);
    mat4_variable(b, "fixed", t.f, t.nf);
    return nw_outputs_write_buffer(o, path, (const char *)b->data, b->len, error);
  }
  g_autofree char *text = itk_text(&t);
  return nw_outputs_write_buffer(o, path, text, -1, error);
}

gboolean nw_transform_read(const char *path, const NwVolume *fixed, const NwVolume *moving,
                           double m[16], GError **error)
{
  g_autofree char *data = NULL;
  gsize len = 0;
  if (!nw_input_file_check(path, NULL, error) || !g_file_get_contents(path, &data, &len, error))
    return FALSE;
  ItkTransform t;
  gboolean ok;
  double flirt[16];
  const gboolean text = memchr(data, '\0', len) == NULL;
  if (text && nw_fsl_parse_text(data, flirt)) {
    if (fixed == NULL || moving == NULL) {
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                  "%s: an FSL matrix needs the fixed and the moving image", path);
      return FALSE;
    }
    ok = nw_fsl_to_ras(flirt, fixed, moving, m, error);
  } else {
    ok = (text ? parse_itk_text(data, &t, error)
               : parse_itk_mat((const guint8 *)data, len, &t, error)) &&
         itk_to_ras(&t, m, error);
  }
  if (!ok)
    g_prefix_error(error, "%s: ", path);
  return ok;
}
