/* params.h — per-method parameter tables: name, type, default, range, unit, tooltip and
 * whether a value may change while a job runs ("live"). The CLI builds its options, the GUI
 * its parameter panel, and the session file its key-file group from the same table.
 *
 * Every value is held as a double (integers, booleans and enum indices included), so one
 * small struct serves every method. Any thread; an NwParams is not shared between threads
 * (the job runner copies it). */
#ifndef NW_PARAMS_H
#define NW_PARAMS_H

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  NW_PARAM_DOUBLE,
  NW_PARAM_INT,
  NW_PARAM_BOOL,
  NW_PARAM_ENUM, /* value is the index into choices */
} NwParamType;

typedef struct {
  const char *name;      /* key: lower-case with dashes, e.g. "sigma-fluid" */
  NwParamType type;
  double def, min, max;  /* default and inclusive range */
  const char *unit;      /* "voxel", "mm", "", ... shown beside the value */
  const char *tooltip;   /* one sentence: what it does and when to change it */
  gboolean live;         /* may change between iterations of a running job */
  const char *const *choices; /* NULL-terminated names, for NW_PARAM_ENUM */
} NwParamSpec;

typedef struct {
  const NwParamSpec *specs; /* the method's table; not owned */
  int n;
  double *values;           /* n values; owned */
} NwParams;

/* Defaults of a table. */
NwParams *nw_params_new(const NwParamSpec *specs, int n);
NwParams *nw_params_copy(const NwParams *p);
void nw_params_free(NwParams *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(NwParams, nw_params_free)

int nw_params_find(const NwParams *p, const char *name);  /* index or -1 */
/* Value by name; the name must be in the table (programmer error otherwise). */
double nw_params_get(const NwParams *p, const char *name);
int nw_params_get_int(const NwParams *p, const char *name);
/* Set after validation: the error names the parameter, the value and the allowed range. */
gboolean nw_params_set(NwParams *p, const char *name, double value, GError **error);
/* Parse "name=value" (name NULL) or a value for a named parameter ("3", "1.5", "true",
 * "symmetric"). Booleans also take yes/no/on/off/1/0; enum choices match case-insensitively. */
gboolean nw_params_set_string(NwParams *p, const char *name, const char *text, GError **error);
/* The value as text: enum choice name, "true"/"false", or a number with %g. Free with g_free. */
char *nw_params_format(const NwParams *p, int index);

/* Which values differ from old's, restricted to parameters that are not live:
 * returns the first non-live name that changed, or NULL. */
const char *nw_params_first_non_live_change(const NwParams *old, const NwParams *new_p);

/* Key-file (de)serialisation under group (the method name). Unknown keys are an error that
 * names them; missing keys keep their current value. */
void nw_params_to_key_file(const NwParams *p, GKeyFile *kf, const char *group);
gboolean nw_params_from_key_file(NwParams *p, GKeyFile *kf, const char *group, GError **error);

G_END_DECLS

#endif
