/* input_file.c — see input_file.h. Any thread. */
#define _GNU_SOURCE /* O_CLOEXEC, O_NONBLOCK */
#include "input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nw_error.h"

static gboolean refuse(const char *path, const char *why, GError **error)
{
  g_set_error(error, NW_ERROR, NW_ERROR_IO, "%s: cannot open: %s", path, why);
  return FALSE;
}

gboolean nw_input_file_check(const char *path, goffset *size_out, GError **error)
{
  /* stat, not open: opening a FIFO for reading blocks until a writer comes. */
  GStatBuf st;
  if (g_stat(path, &st) != 0)
    return refuse(path, g_strerror(errno), error);
  if (S_ISDIR(st.st_mode))
    return refuse(path, "is a folder", error);
  if (!S_ISREG(st.st_mode))
    return refuse(path, "not a regular file (a FIFO, socket or device)", error);
  /* O_NONBLOCK: should the path have become a FIFO since the stat, the open does not hang. */
  int fd = g_open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
  if (fd < 0)
    return refuse(path, g_strerror(errno), error);
  close(fd);
  if (size_out != NULL)
    *size_out = (goffset)st.st_size;
  return TRUE;
}
