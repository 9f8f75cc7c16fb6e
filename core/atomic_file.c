/* atomic_file.c — output sets written into unnamed temporaries and named together (see
 * atomic_file.h). Any thread; one set is used by one thread. Linux: O_TMPFILE and linkat
 * through /proc/self/fd; elsewhere (or on file systems without O_TMPFILE) hidden named
 * temporaries. */
#define _GNU_SOURCE /* O_TMPFILE, AT_SYMLINK_FOLLOW */
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nw_error.h"

typedef struct {
  char *path;   /* the final name */
  int fd;       /* the unnamed temporary, or -1 */
  char *hidden; /* the named temporary (fallback, or on the way to replacing a file) */
  gboolean stale, written, named;
} Entry;

struct NwOutputs {
  gboolean overwrite;
  GArray *entries; /* Entry */
  GPtrArray *paths; /* written, NULL-terminated */
};

NwOutputs *nw_outputs_new(gboolean overwrite)
{
  NwOutputs *o = g_new0(NwOutputs, 1);
  o->overwrite = overwrite;
  o->entries = g_array_new(FALSE, TRUE, sizeof(Entry));
  o->paths = g_ptr_array_new();
  g_ptr_array_add(o->paths, NULL);
  return o;
}

static void entry_discard(Entry *e)
{
  if (e->fd >= 0)
    close(e->fd);
  e->fd = -1;
  if (e->hidden != NULL)
    g_unlink(e->hidden);
  g_clear_pointer(&e->hidden, g_free);
}

void nw_outputs_free(NwOutputs *o)
{
  if (o == NULL)
    return;
  for (guint i = 0; i < o->entries->len; i++) {
    Entry *e = &g_array_index(o->entries, Entry, i);
    entry_discard(e);
    g_free(e->path);
  }
  g_array_unref(o->entries);
  g_ptr_array_unref(o->paths);
  g_free(o);
}

static Entry *find(NwOutputs *o, const char *path)
{
  for (guint i = 0; i < o->entries->len; i++)
    if (strcmp(g_array_index(o->entries, Entry, i).path, path) == 0)
      return &g_array_index(o->entries, Entry, i);
  return NULL;
}

/* "dir/base.nii.gz" -> "dir/.base.XXXXXX.nii.gz": hidden, same folder, same extension. */
static char *hidden_template(const char *path)
{
  g_autofree char *dir = g_path_get_dirname(path);
  g_autofree char *base = g_path_get_basename(path);
  const char *ext = strchr(base[0] == '.' ? base + 1 : base, '.');
  g_autofree char *stem = ext ? g_strndup(base, (gsize)(ext - base)) : g_strdup(base);
  g_autofree char *name = g_strdup_printf(".%s.XXXXXX%s", stem, ext ? ext : "");
  return g_build_filename(dir, name, NULL);
}

/* An unnamed temporary in path's folder (fd), or a hidden named one (*hidden); -1 and errno. */
static int make_temporary(const char *path, char **hidden)
{
  g_autofree char *dir = g_path_get_dirname(path);
  *hidden = NULL;
#ifdef O_TMPFILE
  int fd = g_open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
  if (fd >= 0 && g_file_test("/proc/self/fd", G_FILE_TEST_IS_DIR))
    return fd;
  if (fd >= 0)
    close(fd);
  else if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
    return -1; /* a real refusal (read-only, no permission): say it */
#endif
  char *tmpl = hidden_template(path);
  int named = g_mkstemp_full(tmpl, O_RDWR | O_CLOEXEC, 0666);
  if (named < 0) {
    int e = errno;
    g_free(tmpl);
    errno = e;
    return -1;
  }
  *hidden = tmpl;
  return named;
}

static gboolean claim(NwOutputs *o, const char *path, gboolean stale, GError **error)
{
  if (find(o, path) != NULL)
    return TRUE;
  g_autofree char *dir = g_path_get_dirname(path);
  GStatBuf st;
  if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
    g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: cannot write: folder %s does not exist", path,
                dir);
    return FALSE;
  }
  if (g_lstat(path, &st) == 0) {
    const char *why = S_ISDIR(st.st_mode)                       ? "is a folder"
                      : !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode) ? "not a regular file"
                                                                   : NULL;
    if (why != NULL) {
      g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: cannot write: %s", path, why);
      return FALSE;
    }
    if (!o->overwrite) {
      g_set_error(error, NW_ERROR, NW_ERROR_EXISTS, "%s: exists already", path);
      return FALSE;
    }
  }
  Entry e = {.path = g_strdup(path), .fd = -1, .stale = stale};
  if (!stale) { /* a temporary there now tells whether the folder takes files */
    int fd = make_temporary(path, &e.hidden);
    if (fd < 0) {
      g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: cannot write in folder %s: %s", path, dir,
                  g_strerror(errno));
      g_free(e.path);
      return FALSE;
    }
    e.fd = fd;
  }
  g_array_append_val(o->entries, e);
  return TRUE;
}

gboolean nw_outputs_claim(NwOutputs *o, const char *path, GError **error)
{
  return claim(o, path, FALSE, error);
}

gboolean nw_outputs_claim_stale(NwOutputs *o, const char *path, GError **error)
{
  return claim(o, path, TRUE, error);
}

gboolean nw_outputs_write(NwOutputs *o, const char *path, NwFileWriter writer, gpointer data,
                          GError **error)
{
  if (!claim(o, path, FALSE, error))
    return FALSE;
  Entry *e = find(o, path);
  if (e->stale || e->written) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID, "%s: written twice in one run", path);
    return FALSE;
  }
  g_autofree char *tmp =
      e->hidden != NULL ? g_strdup(e->hidden) : g_strdup_printf("/proc/self/fd/%d", e->fd);
  GError *local = NULL;
  if (!writer(tmp, data, &local)) {
    g_set_error(error, local->domain, local->code, "%s: %s", path, local->message);
    g_error_free(local);
    return FALSE;
  }
  e->written = TRUE;
  g_ptr_array_insert(o->paths, (gint)o->paths->len - 1, e->path);
  return TRUE;
}

/* Termination signals wait while names are given (this thread). */
static void hold_signals(gboolean hold, sigset_t *old)
{
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGQUIT);
  if (hold)
    pthread_sigmask(SIG_BLOCK, &set, old);
  else
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* The unnamed temporary gets the final name, or a hidden one when a file is to be replaced
 * (link cannot replace); the hidden one is renamed over the final name. */
static gboolean name_one(Entry *e, GError **error)
{
  if (e->hidden == NULL) {
    g_autofree char *fdpath = g_strdup_printf("/proc/self/fd/%d", e->fd);
    if (linkat(AT_FDCWD, fdpath, AT_FDCWD, e->path, AT_SYMLINK_FOLLOW) == 0) {
      e->named = TRUE;
      return TRUE;
    }
    if (errno != EEXIST)
      goto failed;
    e->hidden = hidden_template(e->path);
    int fd = g_mkstemp_full(e->hidden, O_RDWR | O_CLOEXEC, 0666);
    if (fd < 0 || (close(fd), g_unlink(e->hidden)) != 0 ||
        linkat(AT_FDCWD, fdpath, AT_FDCWD, e->hidden, AT_SYMLINK_FOLLOW) != 0)
      goto failed;
  }
  if (g_rename(e->hidden, e->path) != 0)
    goto failed;
  g_clear_pointer(&e->hidden, g_free);
  e->named = TRUE;
  return TRUE;
failed:
  g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: cannot write: %s", e->path, g_strerror(errno));
  return FALSE;
}

gboolean nw_outputs_commit(NwOutputs *o, GError **error)
{
  sigset_t old;
  hold_signals(TRUE, &old);
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < o->entries->len; i++) {
    Entry *e = &g_array_index(o->entries, Entry, i);
    if (e->written)
      ok = name_one(e, error);
  }
  for (guint i = 0; i < o->entries->len; i++) {
    Entry *e = &g_array_index(o->entries, Entry, i);
    if (!ok && e->named)
      g_unlink(e->path); /* ours, complete, but the run is not: take it back */
    else if (ok && e->stale && o->overwrite)
      g_unlink(e->path);
    entry_discard(e);
    e->named = FALSE;
  }
  hold_signals(FALSE, &old);
  return ok;
}

const char *const *nw_outputs_paths(NwOutputs *o)
{
  return (const char *const *)o->paths->pdata;
}

gboolean nw_write_atomically(const char *path, NwFileWriter writer, gpointer data,
                             GError **error)
{
  g_autoptr(NwOutputs) o = nw_outputs_new(TRUE);
  return nw_outputs_write(o, path, writer, data, error) && nw_outputs_commit(o, error);
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

gboolean nw_outputs_write_buffer(NwOutputs *o, const char *path, const char *contents,
                                 gssize length, GError **error)
{
  Buffer b = {contents, length < 0 ? strlen(contents) : (gsize)length};
  return nw_outputs_write(o, path, write_buffer, &b, error);
}

gboolean nw_write_file_atomically(const char *path, const char *contents, gssize length,
                                  GError **error)
{
  g_autoptr(NwOutputs) o = nw_outputs_new(TRUE);
  return nw_outputs_write_buffer(o, path, contents, length, error) && nw_outputs_commit(o, error);
}
