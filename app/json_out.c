/* json_out.c — see json_out.h. */
#include "json_out.h"

#include <math.h>

void nw_json_add_number(JsonBuilder *b, double value)
{
  if (!isfinite(value))
    json_builder_add_null_value(b); /* JSON has no NaN or Infinity */
  else if (value == floor(value) && fabs(value) < 1e15)
    json_builder_add_int_value(b, (gint64)value); /* 181, not 181.0 */
  else
    json_builder_add_double_value(b, value); /* %.17g in the C locale: round-trips */
}

void nw_json_add_string(JsonBuilder *b, const char *text)
{
  g_autofree char *valid = g_utf8_make_valid(text != NULL ? text : "", -1);
  json_builder_add_string_value(b, valid);
}

void nw_json_add_param(JsonBuilder *b, const NwParams *p, int i)
{
  if (p->specs[i].type == NW_PARAM_ENUM || p->specs[i].type == NW_PARAM_BOOL) {
    g_autofree char *text = nw_params_format(p, i);
    nw_json_add_string(b, text);
  } else {
    nw_json_add_number(b, p->values[i]);
  }
}

void nw_json_add_params(JsonBuilder *b, const NwParams *p)
{
  json_builder_begin_object(b);
  for (int i = 0; i < p->n; i++) {
    json_builder_set_member_name(b, p->specs[i].name);
    nw_json_add_param(b, p, i);
  }
  json_builder_end_object(b);
}

void nw_json_add_numbers(JsonBuilder *b, const double *v, int n)
{
  json_builder_begin_array(b);
  for (int i = 0; i < n; i++)
    nw_json_add_number(b, v[i]);
  json_builder_end_array(b);
}

void nw_json_add_matrix4(JsonBuilder *b, const double m[16])
{
  json_builder_begin_array(b);
  for (int r = 0; r < 4; r++)
    nw_json_add_numbers(b, m + 4 * r, 4);
  json_builder_end_array(b);
}

void nw_json_member_number(JsonBuilder *b, const char *key, double value)
{
  json_builder_set_member_name(b, key);
  nw_json_add_number(b, value);
}

void nw_json_member_string(JsonBuilder *b, const char *key, const char *text)
{
  json_builder_set_member_name(b, key);
  nw_json_add_string(b, text);
}

char *nw_json_to_string(JsonBuilder *b, gboolean pretty)
{
  g_autoptr(JsonNode) root = json_builder_get_root(b);
  g_autoptr(JsonGenerator) gen = json_generator_new();
  json_generator_set_pretty(gen, pretty);
  json_generator_set_indent(gen, 2);
  json_generator_set_root(gen, root);
  return json_generator_to_data(gen, NULL);
}
