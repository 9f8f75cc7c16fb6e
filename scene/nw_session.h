/* nw_session.h — a session file: what is needed to take up work again, in a GKeyFile
 * (text, one group per method, keys as in the parameter tables and the CLI's --params):
 *
 *   [session]
 *   version=1
 *   method=demons
 *   device=auto
 *   fixed=/data/fixed.nii.gz      (absent for the demo case; demo=true instead)
 *   moving=/data/moving.nii.gz
 *   demo=false
 *   second-job=false              (two jobs side by side)
 *   device-2=cpu
 *   [demons]                      (parameters of the first job)
 *   sigma-fluid=1
 *   ...
 *   [demons@2]                    (of the second job, when second-job is true)
 *
 * Written to a temporary name and renamed. Reading checks version, the method name and
 * every parameter (unknown keys and out-of-range values are errors that name the file, the
 * key and the value). Any thread; plain data. */
#ifndef NW_SESSION_H
#define NW_SESSION_H

#include <glib.h>

#include "method.h"
#include "params.h"

G_BEGIN_DECLS

typedef struct {
  char *method;       /* registered method name */
  NwDevice device;
  char *fixed_path;   /* NULL with demo or when not from a file */
  char *moving_path;
  gboolean demo;
  NwParams *params;   /* of method's table */
  gboolean second_job;
  NwDevice device2;
  NwParams *params2;  /* NULL unless second_job */
} NwSession;

void nw_session_clear(NwSession *s);
/* Save atomically; the error names the path. */
gboolean nw_session_save(const NwSession *s, const char *path, GError **error);
/* Load into s (cleared first); the parameter tables come from the method registry
 * (nw_method_lookup with NW_DEVICE_CPU or any registered device). */
gboolean nw_session_load(NwSession *s, const char *path, GError **error);

/* A preset: a key file whose group [METHOD] (or, when it has a single group, that group)
 * holds parameter values, as the .ini files of resources/presets and the CLI's --params
 * read. Values not named keep their current value. The error names the file and the key. */
gboolean nw_preset_apply(NwParams *p, const char *method, const char *path, GError **error);
/* The presets shipped for method: display names ("brain MRI") and their files, from the
 * installed or source-tree presets folder (NW_PRESETS_DIR, a compile definition), files
 * named METHOD-NAME.ini. Free both arrays with g_ptr_array_unref. */
void nw_presets_list(const char *method, GPtrArray **names, GPtrArray **paths);
/* The folder nw_presets_list reads: the installed one when it exists (an installed build),
 * else the source tree's; NULL when the build names neither. */
const char *nw_presets_dir(void);

G_END_DECLS

#endif
