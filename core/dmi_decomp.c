/* dmi_decomp.c — see dmi_decomp.h. */
#include "dmi_decomp.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "nw_error.h"

static const char *const axis_names[3] = {"x", "y", "z"};

gboolean nw_dmi_layout_parse(const char *text, NwDmiLayout *out, GError **error)
{
  g_auto(GStrv) parts = g_strsplit(text != NULL ? text : "", "x", -1);
  const guint n = g_strv_length(parts);
  NwDmiLayout l = {{1, 1, 1}};
  gboolean ok = n == 2 || n == 3;
  for (guint a = 0; ok && a < n; a++) {
    char *end = NULL;
    errno = 0;
    const long v = parts[a][0] >= '0' && parts[a][0] <= '9' ? strtol(parts[a], &end, 10) : 0;
    ok = errno == 0 && end != NULL && *end == '\0' && v >= 1 && v <= 65536;
    l.m[a] = (int)v;
  }
  if (!ok) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "--blocks '%s': expected AxB or AxBxC with positive whole numbers, e.g. 2x2",
                text != NULL ? text : "");
    return FALSE;
  }
  *out = l;
  return TRUE;
}

const char *nw_dmi_layout_format(const NwDmiLayout *l, int dim, char *buf)
{
  if (dim == 2)
    g_snprintf(buf, 48, "%dx%d", l->m[0], l->m[1]);
  else
    g_snprintf(buf, 48, "%dx%dx%d", l->m[0], l->m[1], l->m[2]);
  return buf;
}

/* The area of a cut across axis a (voxels). */
static double cut_area(const int n[3], int a)
{
  return (double)n[(a + 1) % 3] * (double)n[(a + 2) % 3];
}

static gboolean layout_fits(const NwDmiLayout *l, const int n[3])
{
  for (int a = 0; a < 3; a++)
    if (l->m[a] > 1 && n[a] < NW_DMI_MIN_BLOCK * l->m[a])
      return FALSE;
  return TRUE;
}

gboolean nw_dmi_layout_choose(const int n[3], int dim, int n_blocks, NwDmiLayout *out)
{
  gboolean found = FALSE;
  double best = INFINITY;
  /* mz first, then my, so that on equal cut areas the later (x) cuts lose: ties go to z,
   * then y */
  for (int mz = 1; mz <= (dim == 3 ? n_blocks : 1); mz++) {
    if (n_blocks % mz != 0)
      continue;
    for (int my = 1; my <= n_blocks / mz; my++) {
      if ((n_blocks / mz) % my != 0)
        continue;
      const NwDmiLayout l = {{n_blocks / mz / my, my, mz}};
      if (!layout_fits(&l, n))
        continue;
      double area = 0.0;
      for (int a = 0; a < 3; a++)
        area += (double)(l.m[a] - 1) * cut_area(n, a);
      if (area <= best) { /* equal areas: the later, with more z (then y) cuts, wins */
        best = area;
        *out = l;
        found = TRUE;
      }
    }
  }
  return found;
}

gboolean nw_dmi_layout_check(const NwDmiLayout *l, const int n[3], int dim, int n_ranks,
                             GError **error)
{
  char buf[48];
  nw_dmi_layout_format(l, dim == 2 && l->m[2] == 1 ? 2 : 3, buf);
  if (dim == 2 && l->m[2] != 1) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "--blocks %s: the image is 2D (%d x %d): its layout is AxB", buf, n[0], n[1]);
    return FALSE;
  }
  for (int a = 0; a < 3; a++)
    if (l->m[a] > 1 && n[a] < NW_DMI_MIN_BLOCK * l->m[a]) {
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                  "--blocks %s: %d blocks along %s of an image %d voxels long leave fewer than "
                  "%d voxels a block",
                  buf, l->m[a], axis_names[a], n[a], NW_DMI_MIN_BLOCK);
      return FALSE;
    }
  if (nw_dmi_layout_blocks(l) < n_ranks) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "--blocks %s: %d blocks for %d ranks: every rank needs a block", buf,
                nw_dmi_layout_blocks(l), n_ranks);
    return FALSE;
  }
  return TRUE;
}

void nw_dmi_block_bounds(const NwDmiLayout *l, const int n[3], int b, int lo[3], int hi[3])
{
  const int q[3] = {b % l->m[0], (b / l->m[0]) % l->m[1], b / (l->m[0] * l->m[1])};
  for (int a = 0; a < 3; a++) {
    lo[a] = (int)((gint64)n[a] * q[a] / l->m[a]);
    hi[a] = (int)((gint64)n[a] * (q[a] + 1) / l->m[a]);
  }
}

void nw_dmi_rank_blocks(int r, int n_blocks, int n_ranks, int *first, int *count)
{
  /* the blocks b with floor(b R / B) == r: b in [ceil(r B / R), ceil((r + 1) B / R)) */
  const gint64 B = n_blocks, R = n_ranks;
  const int a = (int)((r * B + R - 1) / R), e = (int)(((r + 1) * B + R - 1) / R);
  *first = a;
  *count = e - a;
}

double nw_dmi_block_bytes(const NwDmiLayout *l, const int fixed_n[3], const int moving_n[3],
                          gboolean fixed_mask, gboolean moving_mask, int bins)
{
  double f = 1.0, m = 1.0;
  for (int a = 0; a < 3; a++) {
    f *= (double)((fixed_n[a] + l->m[a] - 1) / l->m[a]);
    const int halo = l->m[a] > 1 ? 2 * NW_DMI_HALO : 0;
    m *= (double)MIN(moving_n[a], (moving_n[a] + l->m[a] - 1) / l->m[a] + halo);
  }
  return 4.0 * f * (fixed_mask ? 2.0 : 1.0) + 4.0 * m * (moving_mask ? 2.0 : 1.0) +
         8.0 * (double)bins * (double)bins;
}

gboolean nw_dmi_plan(const int fixed_n[3], const int moving_n[3], int dim, gboolean fixed_mask,
                     gboolean moving_mask, int bins, int n_ranks, const NwDmiLayout *forced,
                     double cap_mb, NwDmiPlan *out, GError **error)
{
  out->n_ranks = n_ranks;
  if (forced != NULL) {
    if (!nw_dmi_layout_check(forced, fixed_n, dim, n_ranks, error))
      return FALSE;
    out->layout = *forced;
    out->block_mb =
        nw_dmi_block_bytes(forced, fixed_n, moving_n, fixed_mask, moving_mask, bins) / 1e6;
    if (cap_mb > 0.0 && out->block_mb > cap_mb) {
      char buf[48];
      g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                  "--blocks %s: a block takes %.3g MB, more than --memory-cap %g MB",
                  nw_dmi_layout_format(forced, dim, buf), out->block_mb, cap_mb);
      return FALSE;
    }
    return TRUE;
  }
  /* The most blocks any layout allows; no block count below total / cap can fit, so the
   * search starts there. */
  gint64 max_blocks = 1;
  for (int a = 0; a < dim; a++)
    max_blocks *= MAX(1, fixed_n[a] / NW_DMI_MIN_BLOCK);
  const NwDmiLayout whole = {{1, 1, 1}};
  const double total_mb =
      nw_dmi_block_bytes(&whole, fixed_n, moving_n, fixed_mask, moving_mask, bins) / 1e6;
  gint64 k = cap_mb > 0.0 ? MAX(1, (gint64)floor(total_mb / cap_mb / n_ranks)) : 1;
  double smallest_mb = INFINITY;
  gint64 smallest_blocks = 0;
  for (gint64 tries = 0; k * n_ranks <= max_blocks && tries < 256; k++, tries++) {
    NwDmiLayout l;
    if (!nw_dmi_layout_choose(fixed_n, dim, (int)(k * n_ranks), &l))
      continue;
    const double mb =
        nw_dmi_block_bytes(&l, fixed_n, moving_n, fixed_mask, moving_mask, bins) / 1e6;
    if (cap_mb <= 0.0 || mb <= cap_mb) {
      out->layout = l;
      out->block_mb = mb;
      return TRUE;
    }
    if (mb < smallest_mb) {
      smallest_mb = mb;
      smallest_blocks = k * n_ranks;
    }
  }
  if (cap_mb <= 0.0 || isinf(smallest_mb)) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "the fixed image (%d x %d x %d voxels) cannot be cut into %d blocks of at least "
                "%d voxels a side",
                fixed_n[0], fixed_n[1], fixed_n[2], n_ranks, NW_DMI_MIN_BLOCK);
    return FALSE;
  }
  g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
              "--memory-cap %g MB is too small for the fixed image (%d x %d x %d voxels): the "
              "smallest blocks tried (%" G_GINT64_FORMAT " blocks) take %.3g MB each",
              cap_mb, fixed_n[0], fixed_n[1], fixed_n[2], smallest_blocks, smallest_mb);
  return FALSE;
}

void nw_dmi_owner_tables(const NwDmiLayout *l, const int n[3], int *owner[3])
{
  int *all = g_new(int, (gsize)n[0] + (gsize)n[1] + (gsize)n[2]);
  for (int a = 0, off = 0; a < 3; off += n[a], a++) {
    owner[a] = all + off;
    for (int q = 0; q < l->m[a]; q++) {
      const int lo = (int)((gint64)n[a] * q / l->m[a]), hi = (int)((gint64)n[a] * (q + 1) / l->m[a]);
      for (int i = lo; i < hi; i++)
        owner[a][i] = q;
    }
  }
}
