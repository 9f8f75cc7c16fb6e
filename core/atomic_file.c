/* atomic_file.c — see atomic_file.h. */
#include "atomic_file.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

#include "nw_error.h"

/* "dir/base.nii.gz" -> "dir/.base.<random>.nii.gz": hidden, same folder, same extension. */
static char *temporary_sibling(const char *path)
{
  g_autofree char *dir = g_path_get_dirname(path);
  g_autofree char *base = g_path_get_basename(path);
  const char *ext = strchr(base, '.');
  if (ext == base)
    ext = strchr(base + 1, '.');
  g_autofree char *stem = ext ? g_strndup(base, (gsize)(ext - base)) : g_strdup(base);
  g_autofree char *name =
      g_strdup_printf(".%s.%08x%s", stem, g_random_int(), ext ? ext : "");
  return g_build_filename(dir, name, NULL);
}

gboolean nw_write_atomically(const char *path, NwFileWriter writer, gpointer data,
                             GError **error)
{
  g_autofree char *tmp = temporary_sibling(path);
  GError *local = NULL;
  if (!writer(tmp, data, &local)) {
    g_unlink(tmp);
    /* Errors from the writer may name the temporary file; name the user's file instead. */
    g_set_error(error, local->domain, local->code, "%s: %s", path, local->message);
    g_error_free(local);
    return FALSE;
  }
  if (g_rename(tmp, path) != 0) {
    int e = errno;
    g_unlink(tmp);
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: cannot write: %s", path, g_strerror(e));
    return FALSE;
  }
  return TRUE;
}

typedef struct {
  const char *contents;
  gsize length;
} Buffer;

static gboolean write_buffer(const char *tmp_path, gpointer data, GError **error)
{
  const Buffer *b = data;
  FILE *f = g_fopen(tmp_path, "wb");
  if (f == NULL) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "cannot create: %s", g_strerror(errno));
    return FALSE;
  }
  gboolean ok = fwrite(b->contents, 1, b->length, f) == b->length;
  ok = (fclose(f) == 0) && ok;
  if (!ok)
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "write failed: %s", g_strerror(errno));
  return ok;
}

gboolean nw_write_file_atomically(const char *path, const char *contents, gssize length,
                                  GError **error)
{
  Buffer b = {contents, length < 0 ? strlen(contents) : (gsize)length};
  return nw_write_atomically(path, write_buffer, &b, error);
}
