/* input_file.h — the check every reader makes before it opens a path: it must be a regular
 * file that can be opened for reading. A FIFO or a device would block the open or the read
 * for ever, a folder reads as garbage or an error deep inside a library; refusing them here
 * gives one message that names the path. Any thread; no state. */
#ifndef NW_INPUT_FILE_H
#define NW_INPUT_FILE_H

#include <glib.h>

G_BEGIN_DECLS

/* FALSE with NW_ERROR_IO naming path: "PATH: cannot open: No such file or directory",
 * "PATH: cannot open: is a folder", "PATH: cannot open: not a regular file (a FIFO, socket
 * or device)", "PATH: cannot open: Permission denied". *size_out (may be NULL) gets the
 * file's size in bytes. */
gboolean nw_input_file_check(const char *path, goffset *size_out, GError **error);

G_END_DECLS

#endif
