/* atomic_file.h — every file neurowarp writes goes to a temporary sibling ("name.XXXXXX.tmp"
 * in the same folder, so the rename stays on one file system) and is renamed over the final
 * name only when complete: a crash or an error never leaves a partial result. Any thread. */
#ifndef NW_ATOMIC_FILE_H
#define NW_ATOMIC_FILE_H

#include <glib.h>

G_BEGIN_DECLS

/* Writes the file at tmp_path (the name is chosen for it; it keeps the final name's
 * extension, e.g. ".nii.gz", so format-by-extension libraries behave). */
typedef gboolean (*NwFileWriter)(const char *tmp_path, gpointer data, GError **error);

/* Run writer on a temporary name, then rename to path. On failure the temporary file is
 * removed and the error names path (not the temporary name). */
gboolean nw_write_atomically(const char *path, NwFileWriter writer, gpointer data,
                             GError **error);

/* Whole buffer to path, atomically (JSON summaries, key files). */
gboolean nw_write_file_atomically(const char *path, const char *contents, gssize length,
                                  GError **error);

G_END_DECLS

#endif
