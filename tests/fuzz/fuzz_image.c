/* fuzz_image.c — libFuzzer harness: 2D images (PNG, PGM/PPM, TIFF) through core/io_image.h,
 * built once per format (NW_FUZZ_NAME names the file; the reader goes by content, so the
 * per-format builds differ only in their corpus). Every input must load or be refused with a
 * message naming the file, without allocating what the header claims before the data are
 * known to be there (the fuzzer runs with -rss_limit_mb and -malloc_limit_mb). */
#include <stdint.h>

#include "fuzz_file.h"
#include "io_image.h"

#ifndef NW_FUZZ_NAME
#define NW_FUZZ_NAME "x.png"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *path = nw_fuzz_write(NW_FUZZ_NAME, data, size);
  GError *error = NULL;
  NwVolume *v = nw_image_read(path, &error);
  nw_fuzz_check_error(error, path);
  g_clear_error(&error);
  nw_volume_free(v);
  return 0;
}
