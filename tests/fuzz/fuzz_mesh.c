/* fuzz_mesh.c — libFuzzer harness: mesh files through core/io_mesh.h, built once per format
 * (NW_FUZZ_NAME: x.gii, x.vtk, x.ply, x.obj, lh.pial; the readers sniff the content first,
 * the name only breaks ties, so each format keeps its own corpus). A mesh that loads is
 * checked for manifoldness; FreeSurfer's build also reads the input as a curv file of values
 * for a 4-vertex mesh. Every input must load or be refused with a message naming the file. */
#include <stdint.h>

#include "fuzz_file.h"
#include "io_mesh.h"

#ifndef NW_FUZZ_NAME
#define NW_FUZZ_NAME "x.vtk"
#endif

static void read_scalars(const char *path)
{
  NwSurface *s = nw_surface_new(4, 2, NULL);
  GError *error = NULL;
  if (!nw_mesh_read_scalars(path, s, &error))
    nw_fuzz_check_error(error, path);
  g_clear_error(&error);
  nw_surface_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *path = nw_fuzz_write(NW_FUZZ_NAME, data, size);
  GError *error = NULL;
  NwSurface *s = nw_mesh_read(path, &error);
  nw_fuzz_check_error(error, path);
  g_clear_error(&error);
  if (s != NULL) {
    NwMeshTopology topo;
    if (!nw_mesh_check_manifold(s, path, &topo, &error))
      g_clear_error(&error);
    nw_surface_free(s);
  }
  if (g_str_has_suffix(NW_FUZZ_NAME, ".pial") || g_str_has_suffix(NW_FUZZ_NAME, ".gii"))
    read_scalars(path);
  return 0;
}
