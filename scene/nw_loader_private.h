/* nw_loader_private.h — what the loader's files share: nw_loader.c (files, the demo) and
 * nw_loader_run.c (a run's summary). Any thread (the loader's workers). */
#ifndef NW_LOADER_PRIVATE_H
#define NW_LOADER_PRIVATE_H

#include <glib.h>

/* The layers of the run whose summary JSON is at path (nw_loader.h). */
GPtrArray *nw_load_run_summary(const char *path, GError **error);

#endif
