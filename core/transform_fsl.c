/* transform_fsl.c — FSL FLIRT matrices (see transform_io.h). FSL's coordinates of an image
 * are its voxel indices times the voxel sizes, with i reversed when the voxel-to-world
 * determinant is positive (FSL keeps "radiological" voxel order), so a FLIRT matrix depends
 * on both images' grids:
 *   flirt = W_f · A_f^-1 · T^-1 · A_m · W_m^-1
 * with A the voxel-to-world affines, W the voxel-to-FSL maps and T fixed world -> moving
 * world. Any thread. */
#include "transform_io.h"
#include "transform_io_private.h"

#include <math.h>
#include <string.h>

#include "mat3.h"
#include "nw_error.h"
#include "ras_affine.h"

/* Voxel index -> FSL's scaled coordinates of v. */
static void voxel_to_fsl(const NwVolume *v, double w[16])
{
  double lin[9];
  nw_mat3_from_affine(v->vox_to_ras, lin);
  nw_affine_identity(w);
  for (int a = 0; a < 3; a++)
    w[a * 5] = v->spacing_mm[a];
  if (nw_mat3_det(lin) > 0.0) { /* i -> nx - 1 - i */
    w[0] = -v->spacing_mm[0];
    w[3] = (v->nx - 1) * v->spacing_mm[0];
  }
}

/* flirt from m, or (inverse) m from flirt. */
static gboolean convert(const double in[16], const NwVolume *fixed, const NwVolume *moving,
                        gboolean to_fsl, double out[16])
{
  double wf[16], wm[16], wf_inv[16], wm_inv[16], af_inv[16], am_inv[16], x[16], r[16];
  voxel_to_fsl(fixed, wf);
  voxel_to_fsl(moving, wm);
  if (!nw_affine_inverse(wf, wf_inv) || !nw_affine_inverse(wm, wm_inv) ||
      !nw_affine_inverse(fixed->vox_to_ras, af_inv) ||
      !nw_affine_inverse(moving->vox_to_ras, am_inv) || !nw_affine_inverse(in, x))
    return FALSE;
  if (to_fsl) { /* W_f A_f^-1 T^-1 A_m W_m^-1, x = T^-1 */
    nw_affine_mul(x, moving->vox_to_ras, r);
    nw_affine_mul(r, wm_inv, r);
    nw_affine_mul(af_inv, r, r);
    nw_affine_mul(wf, r, out);
  } else { /* T = A_m W_m^-1 flirt^-1 W_f A_f^-1, x = flirt^-1 */
    nw_affine_mul(wf, af_inv, r);
    nw_affine_mul(x, r, r);
    nw_affine_mul(wm_inv, r, r);
    nw_affine_mul(moving->vox_to_ras, r, out);
  }
  return TRUE;
}

char *nw_transform_fsl_text(const double m[16], const NwVolume *fixed, const NwVolume *moving)
{
  double f[16];
  if (!convert(m, fixed, moving, TRUE, f))
    return NULL;
  GString *s = g_string_new(NULL);
  for (int r = 0; r < 4; r++)
    g_string_append_printf(s, "%.17g  %.17g  %.17g  %.17g\n", f[r * 4], f[r * 4 + 1], f[r * 4 + 2],
                           f[r * 4 + 3]);
  return g_string_free(s, FALSE);
}

gboolean nw_transform_write_fsl(NwOutputs *o, const char *path, const double m[16],
                                const NwVolume *fixed, const NwVolume *moving, GError **error)
{
  g_autofree char *text = nw_transform_fsl_text(m, fixed, moving);
  if (text == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "%s: cannot write an FSL matrix: a singular transform or image affine", path);
    return FALSE;
  }
  return nw_outputs_write_buffer(o, path, text, -1, error);
}

gboolean nw_fsl_parse_text(const char *text, double flirt[16])
{
  g_auto(GStrv) tok = g_strsplit_set(text, " \t\r\n", -1);
  int n = 0;
  for (int i = 0; tok[i] != NULL; i++) {
    if (tok[i][0] == '\0')
      continue;
    char *end = NULL;
    const double v = g_ascii_strtod(tok[i], &end);
    if (*end != '\0' || !isfinite(v) || n >= 16)
      return FALSE;
    flirt[n++] = v;
  }
  return n == 16 && flirt[12] == 0.0 && flirt[13] == 0.0 && flirt[14] == 0.0 && flirt[15] == 1.0;
}

gboolean nw_fsl_to_ras(const double flirt[16], const NwVolume *fixed, const NwVolume *moving,
                       double m[16], GError **error)
{
  if (convert(flirt, fixed, moving, FALSE, m))
    return TRUE;
  g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "the FSL matrix is singular");
  return FALSE;
}
