/* nw_layer_readout.c — a layer's value as drawn, for the status bar (see
 * nw_layer_readout.h). Main thread. */
#include "nw_layer_readout.h"

#include <math.h>

/* du_c/dx_a at (i, j, k), as the log-Jacobian shader takes it (field_heat.frag). */
static double deriv(const NwVolume *u, int c, int a, int i, int j, int k)
{
  const int n[3] = {u->nx, u->ny, u->nz};
  if (n[a] < 2)
    return 0.0;
  int lo[3] = {i, j, k}, hi[3] = {i, j, k};
  lo[a] = MAX(lo[a] - 1, 0);
  hi[a] = MIN(hi[a] + 1, n[a] - 1);
  const float *d = u->data;
  return 0.5 * (d[nw_volume_index(u, hi[0], hi[1], hi[2]) * 3 + c] -
                d[nw_volume_index(u, lo[0], lo[1], lo[2]) * 3 + c]);
}

double nw_field_det_at(const NwVolume *u, int i, int j, int k)
{
  double m[3][3];
  for (int c = 0; c < 3; c++)
    for (int a = 0; a < 3; a++)
      m[c][a] = (c == a ? 1.0 : 0.0) + deriv(u, c, a, i, j, k);
  return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
         m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

void nw_layer_append_readout(NwLayer *l, const double ras[3], GString *out)
{
  double v;
  if (!nw_layer_get_visible(l) || !nw_layer_value_at(l, ras, &v))
    return;
  const char *name = nw_layer_get_name(l);
  switch (nw_layer_get_kind(l)) {
  case NW_LAYER_FIELD:
    if (nw_layer_get_field_show(l) == NW_FIELD_SHOW_LOG_JACOBIAN) {
      const NwVolume *u = nw_layer_get_volume(l);
      double ijk[3];
      nw_volume_world_to_voxel(u, ras, ijk);
      const double det = nw_field_det_at(u, CLAMP((int)floor(ijk[0] + 0.5), 0, u->nx - 1),
                                         CLAMP((int)floor(ijk[1] + 0.5), 0, u->ny - 1),
                                         CLAMP((int)floor(ijk[2] + 0.5), 0, u->nz - 1));
      if (det > 0.0)
        g_string_append_printf(out, "   %s log det J %.3f", name, log(det));
      else
        g_string_append_printf(out, "   %s det J %.3f (folded)", name, det);
    } else {
      g_string_append_printf(out, "   %s |u| %.2f mm", name, v);
    }
    break;
  case NW_LAYER_LABELS: {
    const char *label = nw_layer_get_label_name(l, (int)v);
    g_string_append_printf(out, "   %s %.0f%s%s", name, v, label != NULL ? " " : "",
                           label != NULL ? label : "");
    break;
  }
  default:
    g_string_append_printf(out, "   %s %.4g", name, v);
    break;
  }
}
