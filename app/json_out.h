/* json_out.h — neurowarp's JSON output (neurowarp-cli's --json lines and summaries, the
 * benchmarks' results) through json-glib's JsonBuilder and JsonGenerator, with the rules our
 * JSON has always had: numbers round-trip (%.17g; integral values without a fraction), NaN
 * and Inf become null (JSON has neither), text is valid UTF-8 (invalid bytes are replaced)
 * and NULL text is "". Any thread (one builder per thread). */
#ifndef NW_JSON_OUT_H
#define NW_JSON_OUT_H

#include <json-glib/json-glib.h>

#include "params.h"

G_BEGIN_DECLS

void nw_json_add_number(JsonBuilder *b, double value);
void nw_json_add_string(JsonBuilder *b, const char *text);
/* Parameter i of p: its name for enumerations and booleans ("lcc", "true"), else the number. */
void nw_json_add_param(JsonBuilder *b, const NwParams *p, int i);
/* Every parameter of p as an object {"name": value, ...} (values as nw_json_add_param). */
void nw_json_add_params(JsonBuilder *b, const NwParams *p);
/* A row-major 4x4 matrix as four arrays of four numbers. */
void nw_json_add_matrix4(JsonBuilder *b, const double m[16]);
/* An array of n numbers. */
void nw_json_add_numbers(JsonBuilder *b, const double *v, int n);
/* "key": value members of the object being built. */
void nw_json_member_number(JsonBuilder *b, const char *key, double value);
void nw_json_member_string(JsonBuilder *b, const char *key, const char *text);
/* The builder's finished root as text: one line (compact) or indented (pretty), without a
 * trailing newline; free with g_free. */
char *nw_json_to_string(JsonBuilder *b, gboolean pretty);

G_END_DECLS

#endif
