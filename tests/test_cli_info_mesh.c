/* test_cli_info_mesh.c — `neurowarp-cli info` on a surface as neurowarp writes it (the GUI's
 * "Save results" and "Save layer as" write GIFTI through nw_mesh_write): its size, extent and
 * per-vertex values, as text and JSON, exit status 0. Main thread; no GPU, no display. */
#include <string.h>

#include "io_mesh.h"
#include "testutil.h"

#ifndef NW_CLI_BINARY
#error "NW_CLI_BINARY must name neurowarp-cli"
#endif

static char *run_cli(const char *a1, const char *a2, const char *a3)
{
  const char *argv[] = {NW_CLI_BINARY, a1, a2, a3, NULL};
  char *out = NULL;
  int status = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL,
                             &status, &error));
  g_assert_no_error(error);
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  return out;
}

/* A tetrahedron with one value per vertex. */
static void test_gifti_info(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(NwSurface) s = nw_surface_new(4, 4, &error);
  g_assert_no_error(error);
  const float v[12] = {0, 0, 0, 10, 0, 0, 0, 20, 0, 0, 0, 30};
  const guint32 t[12] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
  memcpy(s->vertices, v, sizeof v);
  memcpy(s->triangles, t, sizeof t);
  s->scalars = g_new(float, 4);
  for (int i = 0; i < 4; i++)
    s->scalars[i] = 0.5f * (float)i - 0.5f;
  g_autofree char *path = nw_test_path("run_surface.gii");
  g_assert_true(nw_mesh_write(path, s, NW_MESH_AUTO, &error));
  g_assert_no_error(error);

  g_autofree char *text = run_cli("info", path, NULL);
  g_assert_nonnull(strstr(text, "  format       GIFTI surface\n"));
  g_assert_nonnull(strstr(text, "  vertices     4\n  triangles    4\n"));
  g_assert_nonnull(
      strstr(text, "  extent       x 0.00 .. 10.00  y 0.00 .. 20.00  z 0.00 .. 30.00 mm (RAS)\n"));
  g_assert_nonnull(strstr(text, "  scalars      min -0.5  max 1 (one per vertex)\n"));
  g_autofree char *json = run_cli("info", "--json", path);
  g_assert_nonnull(strstr(json, "\"format\":\"GIFTI\",\"kind\":\"surface\",\"n_vertices\":4,"
                                "\"n_triangles\":4,"));
  g_assert_nonnull(strstr(json, "\"extent_max_mm\":[10,20,30],\"scalars\":[-0.5,1]}"));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cli/info-gifti", test_gifti_info);
  return g_test_run();
}
