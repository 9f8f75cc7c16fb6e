/* fuzz_file.c — see fuzz_file.h. */
#include "fuzz_file.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nw_error.h"

static char *folder;

static void remove_folder(void)
{
  GDir *d = g_dir_open(folder, 0, NULL);
  const char *name;
  while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
    g_autofree char *p = g_build_filename(folder, name, NULL);
    g_unlink(p);
  }
  if (d != NULL)
    g_dir_close(d);
  g_rmdir(folder);
}

const char *nw_fuzz_path(const char *name)
{
  static GHashTable *paths;
  if (folder == NULL) {
    const char *base = g_file_test("/dev/shm", G_FILE_TEST_IS_DIR) ? "/dev/shm" : g_get_tmp_dir();
    g_autofree char *tmpl = g_build_filename(base, "nwfuzz-XXXXXX", NULL);
    folder = g_mkdtemp(g_steal_pointer(&tmpl));
    if (folder == NULL)
      abort();
    atexit(remove_folder);
    paths = g_hash_table_new(g_str_hash, g_str_equal);
  }
  char *path = g_hash_table_lookup(paths, name);
  if (path == NULL) {
    path = g_build_filename(folder, name, NULL);
    g_hash_table_insert(paths, g_strdup(name), path);
  }
  return path;
}

const char *nw_fuzz_write(const char *name, const uint8_t *data, size_t size)
{
  const char *path = nw_fuzz_path(name);
  FILE *f = fopen(path, "wb");
  if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0)
    abort();
  return path;
}

void nw_fuzz_check_error(GError *error, const char *path)
{
  if (error == NULL)
    return;
  if (error->domain != NW_ERROR || strstr(error->message, path) == NULL) {
    fprintf(stderr, "message without the file's name: %s\n", error->message);
    abort();
  }
}
