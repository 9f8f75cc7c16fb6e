/* fuzz_nifti.c — libFuzzer harness: NIfTI-1/2 images through core/io_nifti.h. Built three
 * ways (tests/fuzz/CMakeLists.txt): NW_FUZZ_GZ=0 reads the input as x.nii; NW_FUZZ_GZ=1 gzips
 * it into x.nii.gz first (the first byte picks: whole stream, stream cut before its trailer,
 * or the raw bytes as a .gz); NW_FUZZ_FIELD=1 reads it as a displacement field. Every input
 * must be read or refused with a message naming the file: never a crash, a leak, undefined
 * behaviour or a hang. */
#include <stdint.h>
#include <zlib.h>

#include "fuzz_file.h"
#include "io_nifti.h"

#ifndef NW_FUZZ_GZ
#define NW_FUZZ_GZ 0
#endif
#ifndef NW_FUZZ_FIELD
#define NW_FUZZ_FIELD 0
#endif

#if NW_FUZZ_GZ
/* data[0] % 3 == 0: a whole gzip stream of the rest; 1: the same without its 8-byte
 * trailer; 2: the rest as it is. */
static const char *write_gz(const uint8_t *data, size_t size)
{
  if (size == 0)
    return nw_fuzz_write("x.nii.gz", data, 0);
  const int mode = data[0] % 3;
  if (mode == 2)
    return nw_fuzz_write("x.nii.gz", data + 1, size - 1);
  uLong bound = compressBound((uLong)size) + 32;
  g_autofree uint8_t *z = g_malloc(bound);
  z_stream s = {0};
  deflateInit2(&s, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY); /* 31: gzip wrapper */
  s.next_in = (Bytef *)data + 1;
  s.avail_in = (uInt)(size - 1);
  s.next_out = z;
  s.avail_out = (uInt)bound;
  deflate(&s, Z_FINISH);
  size_t n = s.total_out;
  deflateEnd(&s);
  return nw_fuzz_write("x.nii.gz", z, mode == 1 && n > 8 ? n - 8 : n);
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#if NW_FUZZ_GZ
  const char *path = write_gz(data, size);
#else
  const char *path = nw_fuzz_write("x.nii", data, size);
#endif
  GError *error = NULL;
#if NW_FUZZ_FIELD
  NwVolume *v = nw_nifti_read_field(path, &error);
#else
  NwNiftiInfo info;
  if (!nw_nifti_read_info(path, &info, &error)) {
    nw_fuzz_check_error(error, path);
    g_clear_error(&error);
  }
  NwVolume *v = nw_nifti_read_multi(path, &error);
#endif
  nw_fuzz_check_error(error, path);
  g_clear_error(&error);
  nw_volume_free(v);
  return 0;
}
