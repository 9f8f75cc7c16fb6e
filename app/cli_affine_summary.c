/* cli_affine_summary.c — PREFIX_summary.json of `neurowarp-cli affine`, for the single-process
 * run (cli_affine.c) and the distributed one (cli_affine_dist.c): see cli_affine_private.h.
 * Main thread. */
#include "affine_method.h"
#include "cli_affine_private.h"
#include "cli_common.h"
#include "json_out.h"
#include "transform_io.h"

/* "transform": kind, dim, centre, parameters in mm and degrees, the 4x4 RAS matrix. */
static void json_transform(JsonBuilder *b, const NwMethodResult *res, int dim, NwTransformKind k)
{
  const double *m = nw_method_result_get_values(res, "transform", NULL);
  const double *c = nw_method_result_get_values(res, "centre", NULL);
  NwTransform t;
  nw_transform_from_matrix(&t, dim, k, c, m, NULL);
  json_builder_set_member_name(b, "transform");
  json_builder_begin_object(b);
  nw_json_member_string(b, "kind", nw_transform_kind_name(k));
  nw_json_member_number(b, "dim", dim);
  json_builder_set_member_name(b, "centre_mm");
  nw_json_add_numbers(b, c, 3);
  json_builder_set_member_name(b, "translation_mm");
  nw_json_add_numbers(b, t.translation_mm, 3);
  double deg[3];
  for (int i = 0; i < 3; i++)
    deg[i] = t.rotation_rad[i] * 180.0 / G_PI;
  json_builder_set_member_name(b, "rotation_deg");
  nw_json_add_numbers(b, deg, 3);
  json_builder_set_member_name(b, "scale");
  nw_json_add_numbers(b, t.scale, 3);
  json_builder_set_member_name(b, "shear");
  nw_json_add_numbers(b, t.shear, 3);
  json_builder_set_member_name(b, "matrix_ras");
  nw_json_add_matrix4(b, m);
  json_builder_end_object(b);
}

char *nw_cli_affine_summary(const AffineArgs *a, NwCliMethod *m, const NwCliRunLog *run,
                            const NwCliTimes *times, const NwMethodResult *res, int dim,
                            const char *const *outputs, NwCliJsonExtra extra, gpointer data)
{
  const NwParams *p = nw_cli_method_params(m);
  const int ki = nw_params_find(p, "transform");
  const char *kind = p->specs[ki].choices[(int)p->values[ki]];
  g_autoptr(JsonBuilder) b = json_builder_new();
  nw_cli_summary_begin(b, m, a->fixed, a->moving);
  json_transform(b, res, dim,
                 g_str_equal(kind, "affine")       ? NW_XFORM_AFFINE
                 : g_str_equal(kind, "similarity") ? NW_XFORM_SIMILARITY
                                                   : NW_XFORM_RIGID);
  const double *cost = nw_method_result_get_values(res, "cost", NULL);
  nw_json_member_number(b, "cost", cost[0]);
  nw_json_member_number(b, "metric_value", cost[1]);
  nw_json_member_number(b, "overlap", cost[2]);
  nw_json_member_number(b, "evaluations", nw_method_result_get_values(res, "evaluations", NULL)[0]);
  if (extra != NULL)
    extra(b, data);
  return nw_cli_summary_end(b, run, times, outputs);
}
