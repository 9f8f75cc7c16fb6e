/* fuzz_file.h — what every libFuzzer harness of tests/fuzz shares: the readers take paths,
 * so each input is written to a file of a fixed name in a private folder (on /dev/shm when
 * there is one, for speed) and read from there. One thread (libFuzzer's). */
#ifndef NW_FUZZ_FILE_H
#define NW_FUZZ_FILE_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

/* The path of file `name` in this process's folder (made on first use, removed at exit). */
const char *nw_fuzz_path(const char *name);
/* Write data to nw_fuzz_path(name) and return that path. */
const char *nw_fuzz_write(const char *name, const uint8_t *data, size_t size);
/* A reader must refuse with a message naming the file: an error without one is a finding. */
void nw_fuzz_check_error(GError *error, const char *path);

#endif
