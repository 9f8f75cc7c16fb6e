/* atomic_file.h — how neurowarp writes files: never a partial file, never a partial run.
 *
 * Every file is first written to an unnamed temporary in its final folder (Linux O_TMPFILE:
 * it has no name, so a crash, a kill -9 or a full disk leaves nothing behind) and given its
 * name only when complete. Where the file system has no unnamed files, a hidden sibling
 * ".name.XXXXXX.ext" is used instead and removed on failure.
 *
 * An NwOutputs is the set of files one run writes: each is checked before the computation
 * (nw_outputs_claim: the folder exists and takes files, the name is not a folder or a
 * device, and an existing file is refused unless the set may overwrite), written into its
 * temporary as soon as it is ready (nw_outputs_write), and all of them are named together
 * when every one succeeded (nw_outputs_commit). Freeing a set that was not committed removes
 * its temporaries: a failed run leaves nothing. Termination signals are held back during
 * the commit, so an interrupt cannot leave half of a run named. Any thread (one set per
 * thread). */
#ifndef NW_ATOMIC_FILE_H
#define NW_ATOMIC_FILE_H

#include <glib.h>

G_BEGIN_DECLS

/* Writes the file at tmp_path: a path to create or truncate and write ("/proc/self/fd/N"
 * for an unnamed temporary). It does not carry the final name's extension: writers choose
 * the format from what the caller passes in data. Errors need not name the file; the
 * caller's message is prefixed with the final path. */
typedef gboolean (*NwFileWriter)(const char *tmp_path, gpointer data, GError **error);

typedef struct NwOutputs NwOutputs;

/* overwrite: existing files at claimed paths are replaced (and stale ones removed at
 * commit); otherwise they are an NW_ERROR_EXISTS error "PATH: exists already". */
NwOutputs *nw_outputs_new(gboolean overwrite);
/* Removes every temporary not committed. */
void nw_outputs_free(NwOutputs *o);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(NwOutputs, nw_outputs_free)

/* Before the work: may path be written? Errors (NW_ERROR_IO unless said): "PATH: cannot
 * write: folder DIR does not exist", "PATH: cannot write: is a folder", "PATH: cannot write:
 * not a regular file", "PATH: cannot write in folder DIR: <reason>" (read-only, /proc, no
 * permission: a temporary is made there to know), NW_ERROR_EXISTS "PATH: exists already".
 * Claiming twice is harmless. */
gboolean nw_outputs_claim(NwOutputs *o, const char *path, GError **error);
/* A file this run will not write but an earlier run with the same names may have left
 * (e.g. PREFIX_labels.nii.gz of a run with labels): existing, it is refused like an output
 * unless overwrite, and removed at commit when overwrite, so no folder holds a mix of two
 * runs. */
gboolean nw_outputs_claim_stale(NwOutputs *o, const char *path, GError **error);
/* Claim path (when not claimed yet) and write its content into a temporary with writer.
 * The error names path. */
gboolean nw_outputs_write(NwOutputs *o, const char *path, NwFileWriter writer, gpointer data,
                          GError **error);
/* Give every written file its name and remove stale files; on failure nothing of the set
 * is left (files it had already named are removed again). */
gboolean nw_outputs_commit(NwOutputs *o, GError **error);
/* The paths written so far, in order (valid while o lives; NULL-terminated). */
const char *const *nw_outputs_paths(NwOutputs *o);

/* One file, replacing an existing one: a set of one with overwrite. */
gboolean nw_write_atomically(const char *path, NwFileWriter writer, gpointer data,
                             GError **error);
/* Whole buffer to path, atomically (JSON summaries, key files). */
gboolean nw_write_file_atomically(const char *path, const char *contents, gssize length,
                                  GError **error);
/* The same into a set. */
gboolean nw_outputs_write_buffer(NwOutputs *o, const char *path, const char *contents,
                                 gssize length, GError **error);

G_END_DECLS

#endif
