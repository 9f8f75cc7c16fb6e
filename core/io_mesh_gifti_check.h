/* io_mesh_gifti_check.h — structural validation of a GIFTI document before giftiio parses
 * it (io_mesh_gifti_check.c says why). Core only, not installed. Any thread, but call it
 * under the giftiio lock (it uses giftiio's string helpers). */
#ifndef NW_IO_MESH_GIFTI_CHECK_H
#define NW_IO_MESH_GIFTI_CHECK_H

#include <glib.h>

G_BEGIN_DECLS

/* text (len bytes) is the content of the file at path. FALSE with NW_ERROR_FORMAT:
 * "PATH: not a valid GIFTI file: DataArray 0: <reason>" or "PATH: not a readable GIFTI file:
 * <XML error>". */
gboolean nw_gifti_check(const char *path, const char *text, gsize len, GError **error);

G_END_DECLS

#endif
